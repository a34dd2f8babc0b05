"""The per-tenant counters and keyword postings of migration 0006 stay exact.

bm25's N and average length and the vector counts of every search come from the counters
(``store/postgres/counts.py``), df and term frequencies from the postings (``memory_terms``),
so each write path that adds, removes or re-texts rows is followed here by a comparison with counts
over the rows themselves, for every tenant; then the backfill of rows written before 0006,
the folding of delta rows, and several connections writing and folding one tenant at once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from omoide.retrieval.terms import keyword_terms
from omoide.store.ports.memories import NewMemory
from omoide.store.postgres import PostgresStore, counts
from omoide.store.postgres.db import Database, connect
from omoide.store.postgres.migrate import migrate
from omoide.types import Scope, SearchFilters
from tests.store.contract import ALICE, ALICE_OTHER, BOB, session_with_episodes, unit

_TRUTH = """
SELECT t.user_id, t.scope_id,
    (SELECT count(*) FROM memories m WHERE (m.user_id, m.scope_id) = (t.user_id, t.scope_id))
        AS memories,
    (SELECT greatest(coalesce(avg(doc_len), 1), 1)::float8 FROM memories m
        WHERE (m.user_id, m.scope_id) = (t.user_id, t.scope_id)) AS avgdl,
    (SELECT count(*) FROM memory_vectors v
        WHERE (v.user_id, v.scope_id) = (t.user_id, t.scope_id)) AS vectors
FROM (SELECT user_id, scope_id FROM memories UNION SELECT user_id, scope_id FROM memory_vectors
      UNION SELECT user_id, scope_id FROM tenant_counts) t
"""


# postings the rows' tsvectors give, against those kept: both differences, with duplicates.
# The weights as memory_postings first computed them (0006: a numeric sum), so that the
# cheaper function of 0009 is checked to write the same rows, to the bit.
_POSTINGS = """
WITH want AS (SELECT m.user_id, m.scope_id, u.lexeme, m.id, m.seq, m.doc_len,
    (SELECT coalesce(sum(CASE wt WHEN 'A' THEN 1.0 WHEN 'B' THEN 0.4 ELSE 0 END), 0)
     FROM unnest(u.weights) wt)::float8
    FROM memories m, unnest(m.tsv) u
    WHERE u.lexeme <> 't' || md5(m.user_id || chr(31) || m.scope_id))
SELECT 'missing' AS what, * FROM (SELECT * FROM want EXCEPT ALL SELECT * FROM memory_terms) a
UNION ALL
SELECT 'extra', * FROM (SELECT * FROM memory_terms EXCEPT ALL SELECT * FROM want) b
"""


# document frequencies kept (migration 0007) against counts over the postings
_FREQUENCIES = """
SELECT user_id, scope_id, lexeme, t.n, l.df
FROM (SELECT user_id, scope_id, lexeme, count(*) AS n FROM memory_terms GROUP BY 1, 2, 3) t
FULL JOIN (SELECT user_id, scope_id, lexeme, sum(df) AS df FROM lexeme_counts
           GROUP BY 1, 2, 3 HAVING sum(df) <> 0) l USING (user_id, scope_id, lexeme)
WHERE t.n IS DISTINCT FROM l.df
"""


def _mismatches(conn: Any) -> list[tuple[Any, ...]]:
    """Tenants whose counters differ from counts over their rows, postings that differ from
    their rows' tsvectors, and document frequencies that differ from counts over the
    postings, in ``conn``'s snapshot."""
    wrong: list[tuple[Any, ...]] = [tuple(r.values()) for r in conn.execute(_POSTINGS)]
    wrong += [tuple(r.values()) for r in conn.execute(_FREQUENCIES)]
    for row in conn.execute(_TRUTH).fetchall():
        tally = counts.read(conn, row["user_id"], row["scope_id"])
        truth = (row["memories"], row["avgdl"], row["vectors"])
        if (tally.memories, tally.avgdl, tally.vectors) != truth:
            wrong.append((row["user_id"], row["scope_id"], truth, tally))
    return wrong


def _assert_exact(url: str) -> None:
    with connect(url) as conn:
        assert _mismatches(conn) == []


def _vector(seed: int) -> np.ndarray:
    return unit(1.0, float(seed % 7), float(seed % 3))


def _row_steps(store: PostgresStore, made: dict[str, Any]) -> list[tuple[str, Callable[[], Any]]]:
    """Each write path that adds, re-texts or removes rows one by one, as one step."""

    def add() -> None:
        with store.transaction() as tx:
            made["one"] = tx.memories.insert_memory(ALICE, NewMemory(text="tea at noon"), "t").id
            tx.memories.insert_memory(BOB, NewMemory(text="bob likes coffee"), "t")

    def bulk() -> None:
        # repeated words in text and context: weights summed over many A and B positions
        news = [
            NewMemory(
                text=f"note {i} about cake" + " cake" * i,
                context="before, pie pie pie and cakes" if i % 2 else "before",
            )
            for i in range(5)
        ]
        with store.transaction() as tx:
            made["bulk"] = [m.id for m in tx.memories.insert_memories(ALICE, news, "t")]
            tx.memories.insert_memories(ALICE_OTHER, news[:2], "t")

    def vectors() -> None:
        with store.transaction() as tx:
            tx.memories.put_vector(ALICE, made["one"], _vector(1))
            ids = made["bulk"]
            tx.memories.put_vectors(ALICE, ids, np.stack([_vector(i) for i in range(len(ids))]))
            tx.memories.put_vectors(ALICE, ids[:2], np.stack([_vector(9), _vector(8)]))  # again

    def retext() -> None:
        with store.transaction() as tx:
            tx.memories.update_memory(
                ALICE, made["one"], "tea at noon with lemon and honey", None, "t"
            )
            tx.memories.update_memory(ALICE, made["bulk"][0], None, {"k": 1}, "t")  # no text
            tx.memories.set_context(ALICE, made["bulk"][1], "a much longer neighbouring turn")

    def versions() -> None:
        with store.transaction() as tx:
            new = NewMemory(text="cake on sundays only")
            tx.memories.supersede_memory(ALICE, made["bulk"][2], new, 10_000, "t")
            tx.memories.invalidate_memory(ALICE, made["bulk"][3], 10_000, "t")

    def delete() -> None:
        with store.transaction() as tx:
            tx.memories.delete_memory(ALICE, made["bulk"][4], "t")

    return [(f.__name__, f) for f in (add, bulk, vectors, retext, versions, delete)]


def _admin_steps(store: PostgresStore, made: dict[str, Any]) -> list[tuple[str, Callable[[], Any]]]:
    """Each write path that removes or re-creates rows in bulk, as one step."""

    def session() -> None:
        session_with_episodes(store, ALICE, "chat", ["hello there"])
        with store.transaction() as tx:
            tx.memories.insert_memory(ALICE, NewMemory(text="in chat", session_id="chat"), "t")
        with store.transaction() as tx:
            tx.sessions.delete_session(ALICE, "chat")  # its memories go with it

    def export_import() -> None:
        records = [(k, r) for k, batch in store.admin.export_records(None, None, 50) for r in batch]
        with store.transaction() as tx:
            tx.admin.delete_everything()
        for kind, record in records:
            with store.transaction() as tx:
                tx.admin.import_records(kind, [record])

    def rebuild() -> None:
        with store.transaction() as tx:
            tx.memories.stage_vector(
                ALICE, made["one"], _vector(3), "tea at noon with lemon and honey"
            )
            tx.memories.swap_staged_vectors()
        with store.transaction() as tx:
            tx.memories.clear_vectors()

    def delete_scope() -> None:
        with store.transaction() as tx:
            tx.admin.delete_scope(ALICE_OTHER)

    def clear() -> None:
        with store.transaction() as tx:
            tx.admin.delete_everything()

    return [(f.__name__, f) for f in (session, export_import, rebuild, delete_scope, clear)]


def test_the_counters_follow_every_write_path(pg_url: str) -> None:
    store = PostgresStore(pg_url)
    try:
        made: dict[str, Any] = {}
        for name, step in _row_steps(store, made) + _admin_steps(store, made):
            step()
            with connect(pg_url) as conn:
                assert _mismatches(conn) == [], name
        assert store.memories.unembedded_count() == 0
    finally:
        store.close()


def test_a_truncate_takes_its_counts_back(pg_url: str) -> None:
    store = PostgresStore(pg_url)
    try:
        with store.transaction() as tx:
            [m] = tx.memories.insert_memories(ALICE, [NewMemory(text="tea")], "t")
            tx.memories.put_vector(ALICE, m.id, _vector(1))
    finally:
        store.close()
    with connect(pg_url) as conn:
        conn.execute("TRUNCATE memory_vectors")
        assert _mismatches(conn) == []
        conn.execute("TRUNCATE memories CASCADE")
        assert _mismatches(conn) == []


# before 0006's counters, before 0007's df, before 0008's postings key, before 0009's function
@pytest.mark.parametrize("written_at", [5, 6, 7, 8])
def test_rows_written_before_a_counting_migration_are_counted(pg_url: str, written_at: int) -> None:
    with connect(pg_url) as conn:
        migrate(conn, upto=written_at)
        for i, scope in enumerate((ALICE, ALICE, BOB)):
            conn.execute(
                "INSERT INTO memories (id, user_id, scope_id, type, text, valid_from,"
                " created_at, updated_at) VALUES (%s, %s, %s, 'raw', %s, 1, 1, 1)",
                (f"m{i}", scope.user_id, scope.scope_id, f"old words number {i}"),
            )
    store = PostgresStore(pg_url)  # migrates to the latest version
    try:
        _assert_exact(pg_url)
        assert store.memories.unembedded_count(ALICE) == 2
        hits = store.memories.keyword_search(ALICE, keyword_terms("words"), SearchFilters(), 5)
        assert {h[0] for h in hits} == {"m0", "m1"}
    finally:
        store.close()


def _deltas(url: str, scope: Scope) -> int:
    with connect(url) as conn:
        row = conn.execute(
            "SELECT count(*) AS n FROM tenant_counts WHERE user_id = %s AND scope_id = %s",
            (scope.user_id, scope.scope_id),
        ).fetchone()
    return int(row["n"]) if row else 0


def test_a_fold_leaves_many_deltas_one_row_and_the_same_statistics(pg_url: str) -> None:
    store = PostgresStore(pg_url)
    try:
        for i in range(counts.COMPACT_AT + 1):
            with store.transaction() as tx:
                tx.memories.insert_memory(ALICE, NewMemory(text=f"tea number {i}"), "t")
        assert _deltas(pg_url, ALICE) == counts.COMPACT_AT + 1
        before = store.memories.keyword_search(ALICE, ["tea", "number"], SearchFilters(), 50)
        assert _deltas(pg_url, ALICE) == counts.COMPACT_AT + 1  # searches never fold
        counts.compact(store.memories._db, ALICE.user_id, ALICE.scope_id)
        assert _deltas(pg_url, ALICE) == 1
        _assert_exact(pg_url)
        after = store.memories.keyword_search(ALICE, ["tea", "number"], SearchFilters(), 50)
        assert after == before  # the same statistics, folded or not
        assert store.memories.unembedded_count(ALICE) == counts.COMPACT_AT + 1
    finally:
        store.close()


WRITERS = 4
ROUNDS = 25


def _writer(url: str, worker: int, errors: list[BaseException]) -> None:
    store = PostgresStore(url)
    try:
        for r in range(ROUNDS):
            with store.transaction() as tx:
                news = [NewMemory(text=f"w{worker} r{r} item {i} " * (i + 1)) for i in range(3)]
                made = tx.memories.insert_memories(ALICE, news, "t")
                tx.memories.put_vector(ALICE, made[0].id, _vector(r))
            with store.transaction() as tx:
                tx.memories.delete_memory(ALICE, made[1].id, "t")
                tx.memories.update_memory(ALICE, made[2].id, f"edited by {worker}", None, "t")
    except BaseException as exc:  # reported by the test, not lost in the thread
        errors.append(exc)
    finally:
        store.close()


def _folder(url: str, stop: threading.Event, errors: list[BaseException]) -> None:
    """Folds the tenant over and over, and checks within REPEATABLE READ snapshots that the
    counters agree with the rows (a fold is one commit: never half seen)."""
    db = Database(url, max_size=2)
    try:
        while not stop.is_set():
            counts.compact(db, ALICE.user_id, ALICE.scope_id)
            with db.read() as conn:
                assert _mismatches(conn) == []
    except BaseException as exc:
        errors.append(exc)
    finally:
        db.close()


@pytest.mark.timeout(300)
def test_concurrent_writers_and_folders_keep_the_counts_exact(pg_url: str) -> None:
    PostgresStore(pg_url).close()  # migrated once, before the threads start
    errors: list[BaseException] = []
    stop = threading.Event()
    folders = [threading.Thread(target=_folder, args=(pg_url, stop, errors)) for _ in range(2)]
    writers = [threading.Thread(target=_writer, args=(pg_url, w, errors)) for w in range(WRITERS)]
    for thread in folders + writers:
        thread.start()
    for thread in writers:
        thread.join()
    stop.set()
    for thread in folders:
        thread.join()
    assert errors == []
    _assert_exact(pg_url)
    with connect(pg_url) as conn:
        row = conn.execute("SELECT count(*) AS n FROM memories").fetchone()
    assert row is not None and row["n"] == WRITERS * ROUNDS * 2
    store = PostgresStore(pg_url)
    try:
        assert store.memories.unembedded_count(ALICE) == WRITERS * ROUNDS
    finally:
        store.close()


def _kept_words(url: str, scope: Scope) -> set[str]:
    with connect(url) as conn:
        rows = conn.execute(
            "SELECT DISTINCT lexeme FROM lexeme_counts WHERE user_id = %s AND scope_id = %s",
            (scope.user_id, scope.scope_id),
        ).fetchall()
    return {str(r["lexeme"]) for r in rows}


def test_the_words_of_deleted_memories_do_not_stay_in_the_frequencies(pg_url: str) -> None:
    store = PostgresStore(pg_url)
    try:
        with store.transaction() as tx:
            secret = tx.memories.insert_memory(ALICE, NewMemory(text="my pin is zanzibar"), "t")
            tx.memories.insert_memory(ALICE, NewMemory(text="my cat is grey"), "t")
            tx.memories.insert_memory(BOB, NewMemory(text="bob went to zanzibar"), "t")
        with store.transaction() as tx:
            tx.memories.delete_memory(ALICE, secret.id, "t")
        counts.compact(store.memories._db, ALICE.user_id, ALICE.scope_id)
        assert "zanzibar" not in _kept_words(pg_url, ALICE)
        assert {"cat", "grey"} <= _kept_words(pg_url, ALICE)
        assert "zanzibar" in _kept_words(pg_url, BOB)  # another tenant's word stays
        with store.transaction() as tx:  # a deleted tenant's words go at once, unfolded
            tx.admin.delete_scope(ALICE)
        assert _kept_words(pg_url, ALICE) == set()
        _assert_exact(pg_url)
        with store.transaction() as tx:
            tx.admin.delete_everything()
        assert _kept_words(pg_url, BOB) == set()
    finally:
        store.close()
