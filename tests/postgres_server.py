"""A throw-away PostgreSQL server for tests (``scripts/postgres.py``'s, fsync off: about 2 s in all). Without
PostgreSQL's binaries the tests that need it are skipped, unless ``BERTLENS_REQUIRE_BROWSER=1`` (CI), where they fail.

    with postgres_or_skip() as server:
        dsn = server.create_database("rooms")  # postgresql://postgres@/rooms?host=FOLDER&port=PORT
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from scripts.postgres import PostgresServer, binaries, missing, running_postgres

REQUIRED = os.environ.get("BERTLENS_REQUIRE_BROWSER") == "1"

__all__ = ["PostgresServer", "postgres_or_skip", "require_postgres"]


def require_postgres() -> None:
    """Skip the test (fail it in CI) when this machine has no PostgreSQL to run."""
    if (problem := missing()) is not None:
        if REQUIRED:
            pytest.fail(f"BERTLENS_REQUIRE_BROWSER=1 but {problem}")
        pytest.skip(problem)


@contextmanager
def postgres_or_skip() -> Iterator[PostgresServer]:
    """``running_postgres``; the test skipped (failed in CI) when this machine has no PostgreSQL to run."""
    require_postgres()
    bin_dir = binaries()
    assert bin_dir is not None, "found by require_postgres"
    with running_postgres(bin_dir) as server:
        yield server
