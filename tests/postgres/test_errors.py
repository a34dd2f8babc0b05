"""Driver errors reach callers as the store's errors, and leave the transaction rolled back."""

from __future__ import annotations

import time
import uuid

import psycopg
import pytest

from omoide.errors import InvalidInput, StoreError
from omoide.store.postgres import PostgresStore
from omoide.store.protocol import NewMemory
from omoide.types import SearchFilters
from tests.store.contract import ALICE

_ALIVE = "SELECT count(*) FROM pg_stat_activity WHERE pid = ANY(%s)"


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


def test_a_pooled_connection_the_server_closed_costs_no_failed_request(pg_url: str) -> None:
    """The pool's check sees a connection the server terminated (a restart, an administrator)
    without a round trip on live ones, and hands out a fresh one instead."""
    name = f"omoide-test-{uuid.uuid4().hex[:8]}"
    sep = "&" if "?" in pg_url else "?"
    store = PostgresStore(f"{pg_url}{sep}application_name={name}")
    try:
        with store.transaction() as tx:
            tx.memories.insert_memory(ALICE, NewMemory(text="tea at noon"), "test")
        assert store.memories.list_memories(ALICE, SearchFilters(), 10, 0)[1] == 1
        with psycopg.connect(pg_url, autocommit=True) as admin:
            pids = [
                r[0]
                for r in admin.execute(
                    "SELECT pid FROM pg_stat_activity WHERE application_name = %s", (name,)
                )
            ]
            row = admin.execute(
                "SELECT count(*) AS n FROM (SELECT pg_terminate_backend(pid)"
                " FROM unnest(%s::int[]) AS pid) t",
                (pids,),
            ).fetchone()
            # pg_terminate_backend only signals: wait until those backends have exited, or on a
            # loaded machine the pool's check can find a connection alive that dies mid-read
            # (by pid: a connection the store opens meanwhile, under the same name, is alive)
            for _ in range(3000):  # a ceiling for a backend that never exits, not a timing
                if admin.execute(_ALIVE, (pids,)).fetchone() == (0,):
                    break
                time.sleep(0.01)
            else:
                pytest.fail("the terminated backends did not exit")
        assert row is not None and row[0] >= 1
        for _ in range(3):  # every pooled connection is dead now; each read must still work
            assert store.memories.list_memories(ALICE, SearchFilters(), 10, 0)[1] == 1
            latest = store.memories.latest_memories(ALICE, SearchFilters(), 5)
            assert [m.text for m in latest] == ["tea at noon"]
            assert store.memories.unembedded_count(ALICE) == 1
    finally:
        store.close()
