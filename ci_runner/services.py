"""A job's `services:` containers (PostgreSQL, MySQL/MariaDB, Redis, Memcached), offline.

No registry is reachable, so `postgres:12` cannot be pulled: each kind of service is a small
image built from the offline base image with Debian's package (PostgreSQL 15, MariaDB 10.11,
Redis 7 on bookworm), tagged by a hash of its recipe and built once. Its entrypoint honours
the variables of the official images (POSTGRES_PASSWORD, POSTGRES_USER, POSTGRES_DB,
POSTGRES_HOST_AUTH_METHOD; MYSQL_ROOT_PASSWORD, MYSQL_ALLOW_EMPTY_PASSWORD, MYSQL_DATABASE,
MYSQL_USER, MYSQL_PASSWORD and their MARIADB_ twins) and refuses to start without a password
as they do. Each service runs in the network namespace of the job's container, listening on
127.0.0.1 at the port the job maps (`ports: ["5432:5432"]`), so the job reaches it as
`localhost` as on GitHub, and it reaches no more than the job (a CI run: loopback only). They
start before the first step, are ready (the kind's own probe) before it runs, and are removed
after the last, in the environment build and in every CI run.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

from ci_runner.config import CISettings
from ci_runner.errors import ServiceError
from ci_runner.images import ImageBuilder
from ci_runner.locks import file_lock
from ci_runner.pipeline import Service
from ci_runner.sandbox.image_store import build_context

Progress = Callable[[str], None]
DATA_DIR = "/var/lib/arena-service"
READY_TIMEOUT_S = 120.0  # for a service to accept connections


@dataclass(frozen=True)
class ServiceKind:
    """How one kind of service is built from Debian and started."""

    name: str
    images: tuple[str, ...]  # the image names (last path part, no tag) it stands in for
    packages: tuple[str, ...]
    user: str
    port: int
    entrypoint: str
    ready: str  # a shell command that succeeds once it accepts connections at $ARENA_PORT

    def dockerfile(self, base_image: str) -> str:
        return f"""FROM {base_image}
ENV DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8
RUN apt-get update \\
 && apt-get install -y --no-install-recommends {" ".join(self.packages)} \\
 && rm -rf /var/lib/apt/lists/* \\
 && mkdir -p {DATA_DIR} && chown {self.user}: {DATA_DIR}
COPY entrypoint /usr/local/bin/arena-service
RUN chmod 755 /usr/local/bin/arena-service
USER {self.user}
CMD ["/usr/local/bin/arena-service"]
"""

    def tag(self, base_id: str, base_image: str) -> str:
        recipe = f"{base_id}\n{self.dockerfile(base_image)}\n{self.entrypoint}"
        return f"arena/service-{self.name}:{hashlib.sha256(recipe.encode()).hexdigest()[:12]}"


_POSTGRES = r"""#!/bin/sh
set -eu
bin=$(ls -d /usr/lib/postgresql/*/bin | tail -n 1)
data=/var/lib/arena-service/data
user="${POSTGRES_USER:-postgres}"
db="${POSTGRES_DB:-$user}"
auth="${POSTGRES_HOST_AUTH_METHOD:-}"
if [ -z "${POSTGRES_PASSWORD:-}" ] && [ -z "$auth" ]; then
  echo "Error: Database is uninitialized and superuser password is not specified." >&2
  echo "  Set POSTGRES_PASSWORD, or POSTGRES_HOST_AUTH_METHOD=trust (as postgres images ask)" >&2
  exit 1
fi
[ -n "$auth" ] || auth=scram-sha-256
set -- -D "$data" -U "$user" --auth-host="$auth" --auth-local=trust -E UTF8 --locale=C.UTF-8
if [ -n "${POSTGRES_PASSWORD:-}" ]; then
  printf '%s\n' "$POSTGRES_PASSWORD" > /tmp/arena-pw
  set -- "$@" --pwfile=/tmp/arena-pw
fi
"$bin/initdb" "$@" ${POSTGRES_INITDB_ARGS:-} > /tmp/initdb.log || { cat /tmp/initdb.log; exit 1; }
rm -f /tmp/arena-pw
if [ "$db" != postgres ]; then
  printf 'CREATE DATABASE "%s";\n' "$(printf '%s' "$db" | sed 's/"/""/g')" |
    "$bin/postgres" --single -D "$data" postgres > /dev/null
fi
version=$("$bin/postgres" --version | awk '{print $3}')
echo "PostgreSQL $version (Debian's) on 127.0.0.1:$ARENA_PORT"
exec "$bin/postgres" -D "$data" -c listen_addresses=localhost -c port="$ARENA_PORT" \
  -c unix_socket_directories=/tmp -c fsync=off -c synchronous_commit=off
"""

_MARIADB = r"""#!/bin/sh
set -eu
data=/var/lib/arena-service/data
root_pw="${MYSQL_ROOT_PASSWORD:-${MARIADB_ROOT_PASSWORD:-}}"
empty="${MYSQL_ALLOW_EMPTY_PASSWORD:-${MARIADB_ALLOW_EMPTY_ROOT_PASSWORD:-}}"
random="${MYSQL_RANDOM_ROOT_PASSWORD:-${MARIADB_RANDOM_ROOT_PASSWORD:-}}"
if [ -z "$root_pw" ] && [ -z "$empty" ] && [ -z "$random" ]; then
  echo "error: database is uninitialized and password option is not specified" >&2
  echo "  You need to specify one of MYSQL_ROOT_PASSWORD, MYSQL_ALLOW_EMPTY_PASSWORD and" >&2
  echo "  MYSQL_RANDOM_ROOT_PASSWORD" >&2
  exit 1
fi
[ -z "$random" ] || root_pw=$(head -c 18 /dev/urandom | base64)
db="${MYSQL_DATABASE:-${MARIADB_DATABASE:-}}"
user="${MYSQL_USER:-${MARIADB_USER:-}}"
user_pw="${MYSQL_PASSWORD:-${MARIADB_PASSWORD:-}}"
quote() { printf "'%s'" "$(printf '%s' "$1" | sed "s/\\\\/\\\\\\\\/g; s/'/''/g")"; }
mariadb-install-db --no-defaults --datadir="$data" --skip-test-db \
  --auth-root-authentication-method=normal > /tmp/install.log 2>&1 ||
  { cat /tmp/install.log; exit 1; }
{
  # as the official images: root@localhost and root@% only (no root@127.0.0.1 without password)
  echo "DELETE FROM mysql.global_priv WHERE Host <> 'localhost'"
  echo "  OR User NOT IN ('root', 'mariadb.sys', 'mysql');"
  echo "FLUSH PRIVILEGES;"
  echo "ALTER USER 'root'@'localhost' IDENTIFIED BY $(quote "$root_pw");"
  echo "CREATE USER 'root'@'%' IDENTIFIED BY $(quote "$root_pw");"
  echo "GRANT ALL ON *.* TO 'root'@'%' WITH GRANT OPTION;"
  [ -z "$db" ] || echo "CREATE DATABASE IF NOT EXISTS \`$db\`;"
  if [ -n "$user" ] && [ "$user" != root ]; then
    echo "CREATE USER $(quote "$user")@'%' IDENTIFIED BY $(quote "$user_pw");"
    [ -z "$db" ] || echo "GRANT ALL ON \`$db\`.* TO $(quote "$user")@'%';"
  fi
} > /tmp/init.sql
mariadbd --no-defaults --datadir="$data" --bootstrap < /tmp/init.sql > /tmp/init.log 2>&1 ||
  { cat /tmp/init.log; exit 1; }
rm -f /tmp/init.sql
echo "MariaDB ($(mariadbd --version | awk '{print $3}')) on 127.0.0.1:$ARENA_PORT"
exec mariadbd --no-defaults --datadir="$data" --port="$ARENA_PORT" --bind-address=127.0.0.1 \
  --socket=/tmp/mysqld.sock --pid-file=/tmp/mysqld.pid --skip-name-resolve \
  --character-set-server=utf8mb4 --collation-server=utf8mb4_unicode_ci \
  --innodb-flush-log-at-trx-commit=0
"""

_REDIS = r"""#!/bin/sh
set -eu
echo "Redis ($(redis-server --version | awk '{print $3}')) on 127.0.0.1:$ARENA_PORT"
set -- --port "$ARENA_PORT" --bind 127.0.0.1 --save "" --appendonly no --dir /tmp
[ -z "${REDIS_PASSWORD:-}" ] || set -- "$@" --requirepass "$REDIS_PASSWORD"
exec redis-server "$@"
"""

_MEMCACHED = r"""#!/bin/sh
set -eu
echo "memcached on 127.0.0.1:$ARENA_PORT"
exec memcached -l 127.0.0.1 -p "$ARENA_PORT" -U 0
"""

_TCP_OPEN = 'bash -c ": > /dev/tcp/127.0.0.1/$ARENA_PORT" 2>/dev/null'

KINDS: tuple[ServiceKind, ...] = (
    ServiceKind(
        "postgres",
        ("postgres", "postgresql"),
        ("postgresql", "postgresql-client"),
        "postgres",
        5432,
        _POSTGRES,
        'pg_isready -q -h 127.0.0.1 -p "$ARENA_PORT"',
    ),
    ServiceKind(
        "mariadb",
        ("mysql", "mariadb", "mysql-server", "percona", "percona-server"),
        ("mariadb-server",),
        "mysql",
        3306,
        _MARIADB,
        _TCP_OPEN,
    ),
    ServiceKind(
        "redis",
        ("redis", "redis-stack-server"),
        ("redis-server",),
        "redis",
        6379,
        _REDIS,
        _TCP_OPEN,
    ),
    ServiceKind(
        "memcached", ("memcached",), ("memcached",), "memcache", 11211, _MEMCACHED, _TCP_OPEN
    ),
)


def kind_of(image: str) -> ServiceKind:
    """The kind that stands in for a job's service image (`postgres:12`, `bitnami/redis`)."""
    name = image.split("@", 1)[0]
    last = name.rsplit("/", 1)[-1].split(":", 1)[0].lower()
    for kind in KINDS:
        if last in kind.images:
            return kind
    known = ", ".join(name for kind in KINDS for name in kind.images)
    raise ServiceError(f"service image {image!r} cannot run offline; known: {known}")


def service_port(service: Service, kind: ServiceKind) -> int:
    """Where the job reaches the service: the local port its `ports:` maps the kind's port
    to, else the kind's own port."""
    return service.ports.get(kind.port, kind.port)


def _quiet(_: str) -> None:
    return None


class ServiceImages:
    """Finds or builds the service images in one Docker engine (from the offline base)."""

    def __init__(self, images: ImageBuilder) -> None:
        self._images = images

    @property
    def settings(self) -> CISettings:
        return self._images.settings

    def ensure(self, kind: ServiceKind, progress: Progress = _quiet) -> str:
        base_id = self._images.ensure_base(progress)
        base = self._images.base_name()
        tag = kind.tag(base_id, base)
        if self._images.find_id(tag):
            return tag
        with file_lock(self.settings.cache_dir / "locks" / f"service-{kind.name}.lock"):
            if self._images.find_id(tag):
                return tag
            progress(f"building {tag}")
            self._build(kind, base, tag)
        return tag

    def _build(self, kind: ServiceKind, base: str, tag: str) -> None:
        context = build_context(kind.dockerfile(base), {"entrypoint": (kind.entrypoint, 0o755)})
        store = self._images.provider.images
        for _ in store.build(tag, context, {"arena.image": f"service-{kind.name}"}):
            pass  # a failed build's error carries the log's tail
