"""Write transactions cost few round trips, and behave as before.

The client's protocol messages are read from libpq's trace of the pool's one connection: a round
trip ends with a ``Sync`` (extended protocol) or is a ``Query`` (simple protocol, ``BEGIN`` and
``COMMIT`` as psycopg sends them). A write transaction's ``BEGIN`` travels with its first
statement, the memories of an add, their history entries and their vectors are one
statement, a new job is announced by its insert, a change of the search timeout goes with
the next statement, and a transaction that ran nothing costs nothing; a statement's results,
row count and errors are still there when its ``execute`` returns, a savepoint opened
first stays inside the transaction, and a connection goes back to the pool at once, without
the settings of the read that used it.
"""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest
from psycopg import sql
from psycopg.pq import Trace
from psycopg.rows import DictRow

from omoide.errors import StoreError
from omoide.store.ports.memories import NewMemory
from omoide.store.postgres import PostgresStore
from omoide.store.postgres.db import Database, connect
from omoide.store.postgres.tx import transaction_ports
from omoide.store.postgres.wakeups import CHANNEL_SQL
from omoide.types import Scope

SCOPE = Scope(user_id="alice", scope_id="notes")


@pytest.fixture
def db(pg_store: PostgresStore, pg_url: str) -> Iterator[Database]:
    """A pool of ONE connection over the migrated schema, so every write uses the traced one."""
    database = Database(pg_url, min_size=1, max_size=1)
    yield database
    database.close()


@contextmanager
def round_trips(db: Database) -> Iterator[list[str]]:
    """The messages ending a round trip that the pool's connection sends inside the block."""
    ends: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trace"
        with path.open("w") as out:
            with db.pool.connection() as conn:
                conn.pgconn.trace(out.fileno())
                conn.pgconn.set_trace_flags(Trace.SUPPRESS_TIMESTAMPS | Trace.REGRESS_MODE)
            try:
                yield ends
            finally:
                with db.pool.connection() as conn:
                    conn.pgconn.untrace()
        for line in path.read_text().splitlines():
            fields = line.split("\t")
            if fields[0] == "F" and len(fields) > 2 and fields[2] in ("Sync", "Query"):
                ends.append(fields[3].strip() if fields[2] == "Query" else "Sync")


def _add(db: Database, text: str) -> str:
    with db.write() as conn:
        tx = transaction_ports(conn)
        vectors = np.ones((1, 8), dtype=np.float32)
        item = tx.memories.insert_memories(SCOPE, [NewMemory(text=text)], "test", vectors)[0]
    assert item.embedded
    return item.id


def test_an_add_is_two_round_trips(db: Database) -> None:
    _add(db, "warm up the pool")
    with round_trips(db) as ends:
        memory_id = _add(db, "the bus leaves at noon")
    # BEGIN with the memories, their history and their vectors; COMMIT
    assert ends == ["Sync", '"COMMIT"']
    with db.read() as conn:
        history = conn.execute(
            "SELECT event, new_text FROM history WHERE memory_id = %s", (memory_id,)
        ).fetchall()
        vectors = conn.execute(
            "SELECT count(*) AS n FROM memory_vectors WHERE memory_id = %s", (memory_id,)
        ).fetchone()
    assert [(h["event"], h["new_text"]) for h in history] == [("ADD", "the bus leaves at noon")]
    assert vectors is not None and vectors["n"] == 1


def test_a_batch_keeps_its_history_in_order(db: Database) -> None:
    texts = [f"memory number {i}" for i in range(7)]
    with db.write() as conn:
        items = transaction_ports(conn).memories.insert_memories(
            SCOPE, [NewMemory(text=t) for t in texts], "test"
        )
    assert [i.text for i in items] == texts
    with db.read() as conn:
        rows = conn.execute(
            "SELECT h.new_text FROM history h JOIN memories m ON m.id = h.memory_id ORDER BY h.id"
        ).fetchall()
    assert [r["new_text"] for r in rows] == texts


def test_a_write_that_runs_nothing_sends_nothing(db: Database) -> None:
    with round_trips(db) as ends, db.write():
        pass
    assert ends == []


def test_the_first_statement_returns_its_rows_and_row_count(db: Database) -> None:
    _add(db, "first")
    _add(db, "second")
    with db.write() as conn:
        cursor = conn.execute("UPDATE memories SET updated_at = updated_at + 1")
        assert cursor.rowcount == 2
        status = conn.info.transaction_status
    assert status == psycopg.pq.TransactionStatus.INTRANS


def test_an_error_of_the_first_statement_is_raised_there_and_rolled_back(db: Database) -> None:
    reached = []
    with pytest.raises(StoreError), db.write() as conn:
        conn.execute("SELECT * FROM no_such_table")
        reached.append("after the failed statement")
    assert reached == []
    assert _add(db, "the connection is usable again")


def test_a_savepoint_first_stays_inside_the_transaction(db: Database) -> None:
    class Abort(Exception):
        pass

    with pytest.raises(Abort), db.write() as conn:
        with conn.transaction():  # a savepoint of the write, not a transaction of its own
            transaction_ports(conn).memories.insert_memories(
                SCOPE, [NewMemory(text="rolled back with the write")], "test"
            )
        raise Abort
    with db.read() as conn:
        row = conn.execute("SELECT count(*) AS n FROM memories").fetchone()
    assert row is not None and row["n"] == 0


def test_a_new_job_is_announced_by_its_insert(db: Database, pg_url: str) -> None:
    listener = connect(pg_url)
    try:
        row = listener.execute(f"SELECT {CHANNEL_SQL} AS channel").fetchone()
        assert row is not None
        listener.execute(sql.SQL("LISTEN {}").format(sql.Identifier(row["channel"])))
        with round_trips(db) as ends, db.write() as conn:
            job_id = transaction_ports(conn).jobs.enqueue_job(SCOPE, "embed", {"ids": []})
        assert ends == ["Sync", '"COMMIT"']  # BEGIN + the insert that notifies, COMMIT
        notices = list(listener.notifies(timeout=30, stop_after=1))
        assert [n.payload for n in notices] == ["0"]
    finally:
        listener.close()
    with db.read() as conn:
        job = conn.execute("SELECT state FROM jobs WHERE id = %s", (job_id,)).fetchone()
    assert job is not None and job["state"] == "pending"


def _timeout(conn: psycopg.Connection[DictRow]) -> str:
    row = conn.execute("SELECT current_setting('statement_timeout') AS t").fetchone()
    assert row is not None
    return str(row["t"])


def test_a_search_then_an_add_costs_no_round_trip_for_the_timeout(db: Database) -> None:
    _add(db, "warm up the pool")
    with db.read_one(search=True) as conn:
        assert _timeout(conn) == "10s"
    with round_trips(db) as ends:
        _add(db, "the timeout goes back with the BEGIN")
    assert ends == ["Sync", '"COMMIT"']
    with db.write() as conn:
        assert _timeout(conn) != "10s"
    with round_trips(db) as ends, db.read_one(search=True) as conn:
        assert _timeout(conn) == "10s"
    assert ends == ["Sync"]  # the SET with the statement


def test_a_failed_search_leaves_the_next_one_under_the_timeout(db: Database) -> None:
    with db.write() as conn:
        assert _timeout(conn) != "10s"
    with pytest.raises(StoreError), db.read_one(search=True) as conn:
        conn.execute("SELECT * FROM no_such_table")  # its SET is rolled back with it
    with db.read_one(search=True) as conn:
        assert _timeout(conn) == "10s"
    with pytest.raises(StoreError), db.write() as conn:
        conn.execute("SELECT * FROM no_such_table")  # its RESET is rolled back with it
    with db.write() as conn:
        assert _timeout(conn) != "10s"
    with db.read_one(search=True):
        pass  # the SET was never sent
    with db.read_one(search=True) as conn:
        assert _timeout(conn) == "10s"


def _settings(conn: psycopg.Connection[DictRow]) -> tuple[str, str]:
    row = conn.execute(
        "SELECT current_setting('transaction_isolation') AS i,"
        " current_setting('transaction_read_only') AS r"
    ).fetchone()
    assert row is not None
    return str(row["i"]), str(row["r"])


def test_a_connection_goes_back_to_the_pool_in_the_thread_that_used_it(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No hand-over to the pool's worker thread (a thread wake-up per statement), after a
    read of one statement, a snapshot read or a write."""
    returned: list[threading.Thread] = []
    add = db.pool._add_to_pool

    def recording(conn: Any) -> None:
        returned.append(threading.current_thread())
        add(conn)

    monkeypatch.setattr(db.pool, "_add_to_pool", recording)
    with db.read_one(search=True) as conn:
        conn.execute("SELECT 1")
    with db.read() as conn:
        conn.execute("SELECT 1")
    _add(db, "back in this thread")
    with db.pool.connection():
        pass  # waits for the connection whichever thread returns it (one in the pool)
    assert returned == [threading.current_thread()] * 4


def test_a_read_leaves_no_setting_to_the_write_after_it(db: Database) -> None:
    with db.read() as conn:
        assert _settings(conn) == ("repeatable read", "on")
    with db.write() as conn:
        assert _settings(conn) == ("read committed", "off")
    with pytest.raises(StoreError), db.read() as conn:
        conn.execute("SELECT * FROM no_such_table")
    with db.write() as conn:
        assert _settings(conn) == ("read committed", "off")


def test_a_backup_after_a_search_runs_at_the_sessions_timeout(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A backup reads every table, for as long as that takes: on the pool's one connection,
    which a search left under the search timeout, it runs at the session's default."""
    from omoide.store.postgres import backup
    from omoide.store.postgres.admin import PostgresAdmin

    _add(db, "something to back up")
    with db.read_one(search=True) as conn:
        assert _timeout(conn) == "10s"
    seen: list[str] = []
    write = backup.write

    def timed_write(conn: Any, dest: Path) -> None:
        seen.append(_timeout(conn))
        write(conn, dest)

    monkeypatch.setattr(backup, "write", timed_write)
    PostgresAdmin(db).backup(tmp_path / "backup.jsonl")
    assert seen and seen[0] != "10s"
    memories = [
        line
        for line in (tmp_path / "backup.jsonl").read_text().splitlines()
        if line.startswith('{"table": "memories"')
    ]
    assert ["something to back up" in line for line in memories] == [True]
