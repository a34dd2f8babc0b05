"""No plan that depends on luck: the first search after a bulk load returns, and no search
waits on maintenance (issue 35).

30k memories went into one tenant through ``add_many``; the first hybrid search then ran for
minutes inside the fold of the tenant's document frequencies, planned without statistics as
a quadratic nested loop. Now folds run at write time with a plan that is linear whatever the
statistics, the touched tables are analyzed after bulk writes, and every search statement
runs under a statement timeout, so a plan gone wrong fails the request instead of hanging.
"""

from __future__ import annotations

import random

import pytest

from omoide import Memory
from omoide.config import Settings
from omoide.embed.hashing import HashEmbedder
from omoide.errors import StoreError
from omoide.store.ports.memories import NewMemory
from omoide.store.postgres import PostgresStore, counts, upkeep
from omoide.store.postgres.db import Database, connect
from omoide.types import SearchFilters
from tests.store.contract import ALICE

LOAD = 30_000
BATCH = 1_000


def _texts(n: int, seed: int = 35) -> list[str]:
    """``n`` texts over a vocabulary of about 60k made-up words (so the tenant has tens of
    thousands of lexemes, as real text does), plus a few real ones."""
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    vocabulary = ["".join(rng.choices(letters, k=rng.randint(5, 9))) for _ in range(60_000)]
    common = ["tea", "garden", "camping", "support", "group", "painting", "music"]
    return [" ".join([*rng.sample(vocabulary, 10), *rng.sample(common, 2)]) for _ in range(n)]


def _deltas(url: str) -> tuple[int, int]:
    """The tenant's delta rows in ``tenant_counts`` and lexemes with more than one row."""
    with connect(url) as conn:
        row = conn.execute(
            "SELECT (SELECT count(*) FROM tenant_counts WHERE user_id = %s AND scope_id = %s)"
            " AS rows, (SELECT count(*) FROM (SELECT lexeme FROM lexeme_counts"
            " WHERE user_id = %s AND scope_id = %s GROUP BY lexeme HAVING count(*) > 1) x)"
            " AS unfolded",
            (ALICE.user_id, ALICE.scope_id, ALICE.user_id, ALICE.scope_id),
        ).fetchone()
    assert row is not None
    return int(row["rows"]), int(row["unfolded"])


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_first_search_after_a_bulk_load_returns(pg_url: str) -> None:
    settings = Settings(pg_search_timeout=10.0)
    texts = _texts(LOAD)
    with Memory(pg_url, embedder=HashEmbedder(), workers=0, settings=settings) as memory:
        for start in range(0, LOAD, BATCH):
            batch = [NewMemory(text=t) for t in texts[start : start + BATCH]]
            memory.add_many(batch, user_id=ALICE.user_id, scope_id=ALICE.scope_id)
        # the load left its statistics behind and its deltas folded (at write time)
        with connect(pg_url) as conn:
            analyzed = conn.execute(
                "SELECT relname, reltuples FROM pg_class WHERE relname = ANY(%s)"
                " AND relnamespace = current_schema()::regnamespace",
                (list(upkeep.TABLES),),
            ).fetchall()
        assert {r["relname"] for r in analyzed} == set(upkeep.TABLES)
        assert all(r["reltuples"] >= 0 for r in analyzed), analyzed
        before = _deltas(pg_url)
        assert before[0] <= counts.COMPACT_AT + 1
        # a search statement over its timeout would raise StoreError here
        found = memory.search(
            "camping with the support group", user_id=ALICE.user_id, scope_id=ALICE.scope_id
        )
        assert not found.degraded, found.warnings
        top = [h.memory.text for h in found.hits[:3]]
        assert top and all("camping" in t or "support" in t for t in top), top
        assert _deltas(pg_url) == before  # the search folded nothing


def test_the_fold_is_planned_linear_without_statistics(pg_url: str) -> None:
    """Never analyzed, ``lexeme_counts`` gives the planner no idea of its rows: the fold still
    aggregates once and joins by hash, never a nested loop over the aggregate."""
    PostgresStore(pg_url).close()  # migrated
    with connect(pg_url) as conn, conn.transaction():
        conn.execute(counts.LINEAR)
        plan = conn.execute(
            "EXPLAIN " + counts._FOLD_LEXEMES, (ALICE.user_id, ALICE.scope_id) * 3
        ).fetchall()
    text = "\n".join(str(r["QUERY PLAN"]) for r in plan)
    assert "Hash Join" in text, text
    assert "Nested Loop" not in text, text


def test_writes_fold_and_searches_do_not(pg_url: str) -> None:
    store = PostgresStore(pg_url)
    try:
        most = 0
        for i in range(3 * counts.COMPACT_AT):
            with store.transaction() as tx:
                tx.memories.insert_memory(ALICE, NewMemory(text=f"tea number {i}"), "t")
            most = max(most, _deltas(pg_url)[0])
        # folded by the writes themselves: at most a check's worth past the threshold
        assert most <= counts.COMPACT_AT + upkeep.CHECK_EVERY
        assert _deltas(pg_url)[0] < 3 * counts.COMPACT_AT
        before = _deltas(pg_url)
        hits = store.memories.keyword_search(ALICE, ["tea", "number"], SearchFilters(), 500)
        assert len(hits) == 3 * counts.COMPACT_AT
        assert store.memories.unembedded_count(ALICE) == 3 * counts.COMPACT_AT
        assert _deltas(pg_url) == before
    finally:
        store.close()


def test_a_search_statement_over_its_timeout_fails_and_a_write_does_not(pg_url: str) -> None:
    PostgresStore(pg_url).close()
    db = Database(pg_url, search_timeout=0.05)
    try:
        with pytest.raises(StoreError, match="cancel") as caught, db.read_one(search=True) as c:
            c.execute("SELECT pg_sleep(2)")
        assert caught.value.retryable
        with pytest.raises(StoreError, match="cancel"), db.read(search=True) as conn:
            conn.execute("SELECT pg_sleep(2)")
        # the same pooled connections, used for other work, are not limited
        for _ in range(2):
            with db.write() as conn:
                conn.execute("SELECT pg_sleep(0.2)")
            with db.read_one() as conn:
                conn.execute("SELECT pg_sleep(0.2)")
    finally:
        db.close()
