"""Throwaway PostgreSQL and Redis servers on free ports, owned by the test that starts them."""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
import redis

from arena.store.migrate import migrate

_SCRATCH_ROOM = 2 * 1024**3  # a session's servers stay well under this
_MIGRATED = "arena_migrated"  # each server's template of the schema


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _pg_bin(name: str) -> str:
    found = shutil.which(name) or next(
        iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))), None
    )
    if found is None:
        pytest.skip(f"PostgreSQL's {name} is not installed (./dev setup installs it)")
    return found


def _as_postgres(args: list[str]) -> list[str]:
    """PostgreSQL refuses to run as root: run its tools as the postgres user then."""
    return ["runuser", "-u", "postgres", "--", *args] if os.geteuid() == 0 else args


@dataclass
class Postgres:
    directory: Path
    port: int

    @property
    def data(self) -> Path:
        return self.directory / "data"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://arena@127.0.0.1:{self.port}/{database}"

    def start(self) -> None:
        options = f"-p {self.port} -k {self.directory} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
        options += " -c dynamic_shared_memory_type=mmap"  # in the data directory, gone with it
        subprocess.run(
            _as_postgres(
                [
                    _pg_bin("pg_ctl"),
                    "-D",
                    str(self.data),
                    "-o",
                    options,
                    "-l",
                    str(self.directory / "log"),
                    "-w",
                    "start",
                ]
            ),
            check=True,
            capture_output=True,
        )

    def stop(self) -> None:
        subprocess.run(
            _as_postgres([_pg_bin("pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop"]),
            check=True,
            capture_output=True,
        )

    def new_database(self, migrated: bool = True) -> str:
        """A fresh database, by default holding the schema: cloned from the template the
        server was started with (measured: a migration costs 0.1 s of CPU, a clone 0.015 s)."""
        name = f"t_{uuid.uuid4().hex[:12]}"
        template = f" TEMPLATE {_MIGRATED} STRATEGY FILE_COPY" if migrated else ""
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}{template}")
        return self.url(name)

    def drop_database(self, url: str) -> None:
        """Keeps a RAM-backed server small over a long session; the test's connections go too."""
        name = url.rsplit("/", 1)[1]
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def make_migrated_template(self) -> None:
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {_MIGRATED}")
        migrate(self.url(_MIGRATED))  # its connection is closed on return, as cloning needs


def _scratch_parent() -> str | None:
    """Where a throwaway server keeps its files: in RAM when there is room.

    They are dropped at the end, so syncing them to a disk buys nothing (Redis here syncs
    every write); on this machine's virtual disk each CREATE DATABASE cost 0.2-0.45 s of CPU,
    against 0.015 s in /dev/shm.
    """
    shm = Path("/dev/shm")
    with contextlib.suppress(OSError):
        if os.access(shm, os.W_OK) and shutil.disk_usage(shm).free >= _SCRATCH_ROOM:
            return str(shm)
    return None  # tempfile's default directory


@contextmanager
def postgres_server() -> Iterator[Postgres]:
    """In a directory of its own, not under pytest's temp dirs: those are closed to the postgres
    user."""
    directory = Path(tempfile.mkdtemp(prefix="arena-pg-", dir=_scratch_parent()))
    if os.geteuid() == 0:
        shutil.chown(directory, "postgres", "postgres")
    server = Postgres(directory, free_port())
    subprocess.run(
        _as_postgres(
            [_pg_bin("initdb"), "-D", str(server.data), "-U", "arena", "--auth=trust", "-E", "UTF8"]
        ),
        check=True,
        capture_output=True,
    )
    server.start()
    try:
        server.make_migrated_template()
        yield server
    finally:
        subprocess.run(
            _as_postgres([_pg_bin("pg_ctl"), "-D", str(server.data), "-m", "immediate", "stop"]),
            capture_output=True,
        )
        shutil.rmtree(directory, ignore_errors=True)


@dataclass
class Redis:
    directory: Path
    port: int
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        """Append-only with fsync on every write: a restart loses no queued message."""
        self.process = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(self.directory),
                "--save",
                "",
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        client = redis.Redis(port=self.port)
        for _ in range(100):
            try:
                client.ping()
                return
            except redis.ConnectionError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not answer")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(10)
            self.process = None


@contextmanager
def redis_server() -> Iterator[Redis]:
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed (./dev setup installs it)")
    directory = Path(tempfile.mkdtemp(prefix="arena-redis-", dir=_scratch_parent()))
    server = Redis(directory, free_port())
    server.start()
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(directory, ignore_errors=True)
