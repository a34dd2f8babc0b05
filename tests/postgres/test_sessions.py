"""Writers of one tenant creating the same session at once (PostgreSQL: separate connections)."""

from __future__ import annotations

import threading
import time

import psycopg

from omoide.store.ports.memories import NewMemory
from omoide.store.postgres import PostgresStore
from tests.store.contract import ALICE

_WAITING = (
    "SELECT count(*) FROM pg_stat_activity"
    " WHERE wait_event_type = 'Lock' AND query LIKE 'INSERT INTO sessions%%'"
)


def _wait_until_blocked(url: str) -> None:
    """Until a backend waits on a lock in its sessions insert (a condition, with a ceiling)."""
    with psycopg.connect(url, autocommit=True) as conn:
        for _ in range(3000):
            row = conn.execute(_WAITING).fetchone()
            if row is not None and row[0] >= 1:
                return
            time.sleep(0.01)
    raise AssertionError("the second writer never waited for the first one's session")


def test_two_writers_creating_one_session_at_once_both_land_in_it(pg_url: str) -> None:
    first, second = PostgresStore(pg_url), PostgresStore(pg_url)
    written: dict[str, str] = {}

    def other_writer() -> None:
        with second.transaction() as tx:
            tx.sessions.ensure_sessions(ALICE, ["chat"])
            news = [NewMemory(text="second", session_id="chat")]
            written["second"] = tx.memories.insert_memories(ALICE, news, "t")[0].id

    try:
        with first.transaction() as tx:
            tx.sessions.ensure_sessions(ALICE, ["chat"])
            news = [NewMemory(text="first", session_id="chat")]
            written["first"] = tx.memories.insert_memories(ALICE, news, "t")[0].id
            thread = threading.Thread(target=other_writer)
            thread.start()
            _wait_until_blocked(pg_url)  # on the first one's uncommitted session row
        thread.join()
        assert set(written) == {"first", "second"}  # the second writer raised nothing
        sessions, total = first.sessions.list_sessions(ALICE, 10, 0)
        assert total == 1 and sessions[0].id == "chat"
        items = first.memories.get_memories(ALICE, [written["first"], written["second"]])
        assert [m.session_id for m in items] == ["chat", "chat"]
    finally:
        first.close()
        second.close()
