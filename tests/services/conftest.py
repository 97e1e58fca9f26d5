"""Fixtures of the services' tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.postgres_server import PostgresServer, postgres_or_skip


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """One PostgreSQL server for the session (skipped without PostgreSQL, failed so in CI)."""
    with postgres_or_skip() as server:
        yield server
