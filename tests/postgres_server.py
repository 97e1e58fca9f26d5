"""A throw-away PostgreSQL server for tests: initdb in a temporary directory, started on a free local port with
fsync off, stopped and deleted at the end (about 2 s in all).

PostgreSQL refuses to run as root, so as root the server runs as the ``postgres`` user (``runuser``) in a directory
it owns. Without PostgreSQL's binaries the tests that need it are skipped, unless ``BERTLENS_REQUIRE_BROWSER=1``
(CI), where they fail.

    with postgres_or_skip() as server:
        dsn = server.create_database("rooms")  # postgresql://postgres@127.0.0.1:PORT/rooms
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

REQUIRED = os.environ.get("BERTLENS_REQUIRE_BROWSER") == "1"
BIN_ENV = "BERTLENS_POSTGRES_BIN"  # the directory of initdb and pg_ctl, when not Debian's
SERVER_USER = "postgres"  # the user the server runs as when the tests run as root


@dataclass(frozen=True)
class PostgresServer:
    data_dir: Path  # its parent holds the socket and the log
    port: int

    def dsn(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        """A new, empty database; its DSN."""
        with psycopg.connect(self.dsn(), autocommit=True) as connection:
            connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return self.dsn(name)


def binaries() -> Path | None:
    """The directory holding initdb and pg_ctl: $BERTLENS_POSTGRES_BIN, Debian's newest, or on the PATH."""
    found = [os.environ.get(BIN_ENV, ""), *sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)]
    on_path = shutil.which("initdb")
    found += [str(Path(on_path).parent)] if on_path else []
    return next((Path(d) for d in found if d and (Path(d) / "initdb").exists() and (Path(d) / "pg_ctl").exists()), None)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def running_postgres(bin_dir: Path) -> Iterator[PostgresServer]:
    as_root = os.geteuid() == 0
    run_as = ["runuser", "-u", SERVER_USER, "--"] if as_root else []
    directory = Path(tempfile.mkdtemp(prefix="bertlens-postgres-"))  # not under pytest's tmp, which only root reads
    data, log = directory / "data", directory / "log"

    def run(program: str, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*run_as, str(bin_dir / program), *args], capture_output=True, text=True, timeout=60)

    try:
        if as_root:
            shutil.chown(directory, SERVER_USER)
        initdb = run("initdb", "-D", str(data), *"-A trust -U postgres -E UTF8 --no-locale --no-sync".split())
        if initdb.returncode:
            raise RuntimeError(f"initdb failed: {initdb.stderr}")
        for port in (_free_port() for _ in range(3)):  # another process may take a free port before the server does
            options = f"-k {directory} -c listen_addresses=127.0.0.1 -p {port} -c fsync=off -c synchronous_commit=off"
            if run("pg_ctl", "-D", str(data), "-l", str(log), "-o", options, "-w", "start").returncode == 0:
                break
        else:
            raise RuntimeError(f"PostgreSQL did not start: {log.read_text(errors='replace')[-2000:]}")
        try:
            yield PostgresServer(data, port)
        finally:
            run("pg_ctl", "-D", str(data), "-m", "immediate", "stop")
    finally:
        shutil.rmtree(directory, ignore_errors=True)


@contextmanager
def postgres_or_skip() -> Iterator[PostgresServer]:
    """``running_postgres``; the test skipped (failed in CI) when this machine has no PostgreSQL to run."""
    bin_dir = binaries()
    if bin_dir is None:
        problem = "PostgreSQL's initdb and pg_ctl were not found (install postgresql, or set BERTLENS_POSTGRES_BIN)"
    elif os.geteuid() == 0 and SERVER_USER not in {user.pw_name for user in pwd.getpwall()}:
        problem = f"the tests run as root and there is no {SERVER_USER!r} user to run PostgreSQL"
    else:
        with running_postgres(bin_dir) as server:
            yield server
        return
    if REQUIRED:
        pytest.fail(f"BERTLENS_REQUIRE_BROWSER=1 but {problem}")
    pytest.skip(problem)
