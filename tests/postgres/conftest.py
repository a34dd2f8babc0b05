"""Fixtures of the PostgreSQL tests: the run's server and a fresh schema per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from omoide.store.postgres import PostgresStore
from tests.postgres.server import fresh_schema, server_url


@pytest.fixture(scope="session")
def pg_server() -> str:
    """The URL of the run's PostgreSQL server (skips when it cannot start)."""
    return server_url()


@pytest.fixture
def pg_url(pg_server: str) -> str:
    """The URL of a new, empty schema for this test."""
    return fresh_schema()


@pytest.fixture
def pg_store(pg_url: str) -> Iterator[PostgresStore]:
    store = PostgresStore(pg_url)
    yield store
    store.close()
