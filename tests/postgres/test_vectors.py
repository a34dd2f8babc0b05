"""Vector search for large tenants: HNSW with iterative scans, measured against exact search
under the tenant filter."""

from __future__ import annotations

import time

import numpy as np
import psycopg
import psycopg.rows
import pytest
from pgvector.psycopg import register_vector

from omoide.store.postgres import PostgresStore, ann
from omoide.store.postgres.filters import memory_filter
from omoide.types import SearchFilters
from tests.store.contract import ALICE

DIM, ROWS, SHARE = 24, 12_000, 10  # alice owns one row in SHARE


def _fill(url: str, rng: np.random.Generator) -> None:
    """ROWS memories with unit vectors, one in SHARE of them alice's, the rest other users'."""
    vectors = rng.normal(size=(ROWS, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    with psycopg.connect(url) as conn:
        conn.execute(
            "INSERT INTO memories (id, user_id, scope_id, type, text, valid_from, created_at,"
            " updated_at) SELECT 'm' || i, CASE WHEN i %% %s = 0 THEN 'alice' ELSE"
            " 'user' || (i %% 37) END, 'demo', 'raw', 'memory ' || i, 0, i, i"
            " FROM generate_series(0, %s - 1) AS i",
            (SHARE, ROWS),
        )
        copy = "COPY memory_vectors (user_id, scope_id, memory_id, embedding) FROM STDIN"
        with conn.cursor().copy(copy) as rows:
            for i in range(ROWS):
                user = "alice" if i % SHARE == 0 else f"user{i % 37}"
                rows.write_row((user, "demo", f"m{i}", str(vectors[i].tolist())))
        conn.execute("ANALYZE memories")
        conn.execute("ANALYZE memory_vectors")


def _index_searches(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The dimensions of the searches that go through the index path from now on."""
    used: list[int] = []
    real_sql = ann.approximate_sql

    def counted(dim: int, where: str) -> str:
        used.append(dim)
        return real_sql(dim, where)

    monkeypatch.setattr(ann, "approximate_sql", counted)
    return used


def test_hnsw_recall_against_exact_search_under_the_tenant_filter(
    pg_store: PostgresStore, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(7)
    _fill(pg_url, rng)
    queries = rng.normal(size=(30, DIM)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    search = pg_store.memories.vector_search
    exact = [[i for i, _ in search(ALICE, q, SearchFilters(), 10)] for q in queries]

    pg_store.create_vector_index(DIM)
    monkeypatch.setattr(ann, "EXACT_MAX", ROWS // SHARE // 2)  # alice now counts as large
    with psycopg.connect(pg_url) as conn:
        plan = conn.execute(
            "EXPLAIN " + ann.approximate_sql(DIM, "m.invalid_at IS NULL"),
            (str(queries[0].tolist()), "alice", "demo", str(queries[0].tolist()), 10),
        ).fetchall()
    assert ann.index_name(DIM) in " ".join(str(r[0]) for r in plan)  # the index answers it
    used = _index_searches(monkeypatch)
    approximate = [[i for i, _ in search(ALICE, q, SearchFilters(), 10)] for q in queries]
    assert len(used) == len(queries)  # every search went through the index path
    recall = np.mean([len(set(a) & set(e)) / 10 for a, e in zip(approximate, exact, strict=True)])
    assert recall >= 0.95, recall
    assert all(len(a) == 10 for a in approximate)  # the filtered LIMIT is always filled
    mine = {f"m{i}" for i in range(0, ROWS, SHARE)}
    assert all(set(a) <= mine for a in approximate)  # never another tenant's rows


def test_a_large_tenant_without_an_index_has_one_built_in_the_background(
    pg_store: PostgresStore, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(11)
    _fill(pg_url, rng)
    queries = rng.normal(size=(20, DIM)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    search = pg_store.memories.vector_search
    exact = [[i for i, _ in search(ALICE, q, SearchFilters(), 10)] for q in queries]
    with psycopg.connect(pg_url, row_factory=psycopg.rows.dict_row) as conn:
        assert not ann.has_index(conn, DIM)  # small tenants ask for no index
    monkeypatch.setattr(ann, "EXACT_MAX", ROWS // SHARE // 2)  # alice now counts as large
    # exact while the index is being built
    assert [i for i, _ in search(ALICE, queries[0], SearchFilters(), 10)] == exact[0]

    def built() -> bool:
        with psycopg.connect(pg_url, row_factory=psycopg.rows.dict_row) as conn:
            return ann.has_index(conn, DIM)

    deadline = time.monotonic() + 300  # a generous bound on a busy machine, not a timing
    while not built():
        assert time.monotonic() < deadline, "the HNSW index was never built"
        time.sleep(0.2)
    found = [[i for i, _ in search(ALICE, q, SearchFilters(), 10)] for q in queries]
    mine = {f"m{i}" for i in range(0, ROWS, SHARE)}
    assert all(len(f) == 10 and set(f) <= mine for f in found)
    recall = np.mean([len(set(f) & set(e)) / 10 for f, e in zip(found, exact, strict=True)])
    assert recall >= 0.9, recall


def _indexes(url: str) -> dict[str, bool]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT c.relname, i.indisvalid FROM pg_index i JOIN pg_class c"
            " ON c.oid = i.indexrelid WHERE c.relname LIKE 'memory_vectors_hnsw%%'"
            " AND c.relnamespace = current_schema()::regnamespace"
        ).fetchall()
    return {str(name): bool(valid) for name, valid in rows}


def test_an_earlier_releases_index_answers_until_this_ones_replaces_it(
    pg_store: PostgresStore, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(13)
    _fill(pg_url, rng)
    (older,) = ann.older_index_names(DIM)
    with psycopg.connect(pg_url, autocommit=True) as conn:  # as an earlier release built it
        conn.execute(
            f"CREATE INDEX {older} ON memory_vectors USING hnsw"
            f" ((embedding::vector({DIM})) vector_ip_ops) WHERE vector_dims(embedding) = {DIM}"
        )
    monkeypatch.setattr(ann, "EXACT_MAX", ROWS // SHARE // 2)  # alice counts as large
    used = _index_searches(monkeypatch)
    query = rng.normal(size=DIM).astype(np.float32)
    query /= np.linalg.norm(query)
    first = pg_store.memories.vector_search(ALICE, query, SearchFilters(), 10)
    assert used == [DIM]  # the older index answered: no exact scan of a large tenant meanwhile
    assert len(first) == 10
    deadline = time.monotonic() + 300  # a generous bound on a busy machine, not a timing
    while _indexes(pg_url) != {ann.index_name(DIM): True}:
        assert time.monotonic() < deadline, f"never replaced: {_indexes(pg_url)}"
        time.sleep(0.2)
    with psycopg.connect(pg_url) as conn:
        options = conn.execute(
            "SELECT reloptions FROM pg_class WHERE relname = %s", (ann.index_name(DIM),)
        ).fetchone()
    assert options is not None and "ef_construction=512" in options[0]
    again = pg_store.memories.vector_search(ALICE, query, SearchFilters(), 10)
    assert len(used) == 2 and len(again) == 10


def test_an_earlier_releases_index_built_again_beside_this_ones_is_dropped(
    pg_store: PostgresStore, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A rolling upgrade: this release's index is valid, and a process of the earlier release
    # built its own again. Every insert would keep both graphs.
    rng = np.random.default_rng(17)
    _fill(pg_url, rng)
    pg_store.create_vector_index(DIM)
    (older,) = ann.older_index_names(DIM)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(
            f"CREATE INDEX {older} ON memory_vectors USING hnsw"
            f" ((embedding::vector({DIM})) vector_ip_ops) WHERE vector_dims(embedding) = {DIM}"
        )
    assert _indexes(pg_url) == {ann.index_name(DIM): True, older: True}
    monkeypatch.setattr(ann, "EXACT_MAX", ROWS // SHARE // 2)  # alice counts as large
    used = _index_searches(monkeypatch)
    query = rng.normal(size=DIM).astype(np.float32)
    query /= np.linalg.norm(query)
    assert len(pg_store.memories.vector_search(ALICE, query, SearchFilters(), 10)) == 10
    assert used == [DIM]
    deadline = time.monotonic() + 300  # a generous bound on a busy machine, not a timing
    while _indexes(pg_url) != {ann.index_name(DIM): True}:
        assert time.monotonic() < deadline, f"never dropped: {_indexes(pg_url)}"
        time.sleep(0.2)
    assert len(pg_store.memories.vector_search(ALICE, query, SearchFilters(), 10)) == 10


def _rows_read(plan: dict[str, object], relation: str) -> float:
    """The rows the plan's scans of ``relation`` returned, over all their loops."""
    own = 0.0
    if plan.get("Relation Name") == relation:
        own = float(plan["Actual Rows"]) * float(plan["Actual Loops"])  # type: ignore[arg-type]
    children = plan.get("Plans", [])
    assert isinstance(children, list)
    return own + sum(_rows_read(child, relation) for child in children)


def test_a_never_analyzed_tenant_reads_only_its_hits_memories(
    pg_store: PostgresStore, pg_url: str
) -> None:
    # A new database filled by single adds has no statistics until autovacuum's next pass:
    # the planner then guesses one row per tenant. The exact search must still read each hit's
    # memory by its key, not scan the tenant's memories once per hit (quadratic: a search of
    # a 1,000-memory tenant took 5x its time until the tables were analyzed).
    rng = np.random.default_rng(23)
    rows = 600
    vectors = rng.normal(size=(rows, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        for table in ("memories", "memory_vectors", "sessions", "projects", "tenant_counts"):
            conn.execute(f"ALTER TABLE {table} SET (autovacuum_enabled = false)")
        conn.execute(
            "INSERT INTO memories (id, user_id, scope_id, type, text, valid_from, created_at,"
            " updated_at) SELECT 'm' || i, 'alice', 'demo', 'raw', 'memory ' || i, 0, i, i"
            " FROM generate_series(0, %s - 1) AS i",
            (rows,),
        )
        copy = "COPY memory_vectors (user_id, scope_id, memory_id, embedding) FROM STDIN"
        with conn.cursor().copy(copy) as out:
            for i in range(rows):
                out.write_row(("alice", "demo", f"m{i}", str(vectors[i].tolist())))
        never = conn.execute(
            "SELECT count(*) FROM pg_stats WHERE tablename IN ('memories', 'memory_vectors')"
            " AND schemaname = current_schema()"
        ).fetchone()
        assert never == (0,)
        register_vector(conn)
        where, params = memory_filter(ALICE, SearchFilters())
        limit = 50
        query = vectors[7]
        found = conn.execute(
            "EXPLAIN (ANALYZE, FORMAT JSON) " + ann.exact_if_small_sql(where),
            ("alice", "demo", query, "alice", "demo", DIM, *params, limit),
        ).fetchone()
    assert found is not None
    plan = found[0][0]["Plan"]
    assert _rows_read(plan, "memories") <= 2 * limit
