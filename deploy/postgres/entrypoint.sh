#!/bin/sh
# First start: create the cluster in the (empty) volume, with the arena role and database and
# password authentication from the compose network. Later starts: just run the server.
set -eu
BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
: "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD must be set}"
USER_NAME=${POSTGRES_USER:-arena}
DB_NAME=${POSTGRES_DB:-arena}
as_postgres() { setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }

chown postgres:postgres "$PGDATA" /run/postgresql
chmod 700 "$PGDATA"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    pwfile=$(mktemp)
    printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
    chown postgres "$pwfile"
    as_postgres "$BIN/initdb" -D "$PGDATA" -U "$USER_NAME" --pwfile="$pwfile" \
        --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 >/dev/null
    rm -f "$pwfile"
    echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
    as_postgres "$BIN/pg_ctl" -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
    as_postgres "$BIN/createdb" -U "$USER_NAME" "$DB_NAME" 2>/dev/null || true
    as_postgres "$BIN/pg_ctl" -D "$PGDATA" -m fast -w stop >/dev/null
    echo "arena-postgres: created the cluster with role $USER_NAME and database $DB_NAME"
fi
exec setpriv --reuid=postgres --regid=postgres --init-groups \
    "$BIN/postgres" -D "$PGDATA" -c listen_addresses='*' -c max_connections=200
