"""Driver errors reach callers as the store's errors, and leave the transaction rolled back."""

from __future__ import annotations

import pytest

from omoide.errors import InvalidInput, StoreError
from omoide.store.postgres import PostgresStore
from omoide.store.protocol import NewMemory
from omoide.types import SearchFilters
from tests.store.contract import ALICE


def test_text_postgresql_cannot_hold_is_invalid_input(pg_store: PostgresStore) -> None:
    """SQLite stores a NUL character; PostgreSQL text cannot, and says so as bad input."""
    with pytest.raises(InvalidInput), pg_store.transaction() as tx:
        tx.sessions.ensure_session(ALICE, "s1")
        tx.memories.insert_memory(ALICE, NewMemory(text="nul \x00 inside"), "t")
    assert pg_store.memories.list_memories(ALICE, SearchFilters(), 10, 0) == ([], 0)


def test_an_unreachable_server_is_a_retryable_store_error(tmp_path: object) -> None:
    with pytest.raises(StoreError) as caught:
        PostgresStore(f"postgresql://nobody@/postgres?host={tmp_path}&connect_timeout=2")
    assert caught.value.retryable
