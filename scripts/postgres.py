"""A PostgreSQL server of the project's own for the live classes' store: ``initdb`` in a private folder (mode 0700),
listening only on a Unix socket there (no TCP: its users are trusted without a password, so only the folder's
owner and root can reach it), stopped at the end. ``scripts/serve.py --replicas N`` runs its
replicas on one (unless ``BERTLENS_CLASS_STORE`` names a database), as do ``scripts/live_class_load.py`` and the
tests (``tests/postgres_server.py``: a throw-away one, fsync off).

PostgreSQL refuses to run as root, so as root the server runs as the ``postgres`` user (``runuser``) in a folder it
owns. The binaries are Debian's (``apt-get install postgresql``: ``/usr/lib/postgresql/<version>/bin``), found on the
PATH, or in ``$BERTLENS_POSTGRES_BIN``.

    with running_postgres(binaries()) as server:
        url = server.create_database("bertlens")  # postgresql://postgres@/bertlens?host=FOLDER&port=PORT
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
from psycopg import sql

BIN_ENV = "BERTLENS_POSTGRES_BIN"  # the directory of initdb and pg_ctl, when not Debian's
SERVER_USER = "postgres"  # the user the server runs as when started by root
START_SECONDS = 60


@dataclass(frozen=True)
class PostgresServer:
    data_dir: Path  # its parent holds the socket and the log
    port: int

    def dsn(self, database: str = "postgres") -> str:
        """Through the server's Unix socket, in a folder only its user (and root) can enter: no password is asked
        (trust), so no other user of the machine may reach the server."""
        return f"postgresql://postgres@/{database}?host={self.data_dir.parent}&port={self.port}"

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


def missing() -> str | None:
    """Why this machine cannot run ``running_postgres`` (for a message), or None when it can."""
    if binaries() is None:
        return (
            f"PostgreSQL's initdb and pg_ctl were not found (apt-get install postgresql, or set {BIN_ENV} to the "
            "folder holding them)"
        )
    if os.geteuid() == 0 and SERVER_USER not in {user.pw_name for user in pwd.getpwall()}:
        return f"this runs as root and there is no {SERVER_USER!r} user to run PostgreSQL as"
    return None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def running_postgres(bin_dir: Path, durable: bool = False) -> Iterator[PostgresServer]:
    """A new server in a temporary folder, deleted with it at the end. ``durable``: fsync on (a class's answers
    survive a power cut); off, for tests, commits are not flushed to disk."""
    as_root = os.geteuid() == 0
    run_as = ["runuser", "-u", SERVER_USER, "--"] if as_root else []
    directory = Path(tempfile.mkdtemp(prefix="bertlens-postgres-"))  # not under pytest's tmp, which only root reads
    data, log = directory / "data", directory / "log"

    def run(program: str, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*run_as, str(bin_dir / program), *args], capture_output=True, text=True, timeout=START_SECONDS
        )

    try:
        if as_root:
            shutil.chown(directory, SERVER_USER)
        initdb = run("initdb", "-D", str(data), *"-A trust -U postgres -E UTF8 --no-locale --no-sync".split())
        if initdb.returncode:
            raise RuntimeError(f"initdb failed: {initdb.stderr}")
        speed = "" if durable else " -c fsync=off -c synchronous_commit=off"
        for port in (_free_port() for _ in range(3)):  # another process may take a free port before the server does
            options = f"-k {directory} -c listen_addresses='' -p {port}{speed}"  # the socket only: no TCP
            if run("pg_ctl", "-D", str(data), "-l", str(log), "-o", options, "-w", "start").returncode == 0:
                break
        else:
            raise RuntimeError(f"PostgreSQL did not start: {log.read_text(errors='replace')[-2000:]}")
        try:
            yield PostgresServer(data, port)
        finally:
            run("pg_ctl", "-D", str(data), "-m", "fast" if durable else "immediate", "stop")
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def postmaster_pid(server: PostgresServer) -> int | None:
    """The server's main process (its first line of ``postmaster.pid``), or None when it is not running."""
    try:
        return int((server.data_dir / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
