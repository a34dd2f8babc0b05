"""Approximate vector search for large tenants: pgvector HNSW with iterative index scans.

A tenant with at most ``EXACT_MAX`` vectors is searched exactly (a scan of its rows by the
tenant index: exact, and fast at that size). A larger tenant is searched through an HNSW index
when one exists for the query's dimension. Vectors have the model's dimension, which no
migration knows, so the index is created on demand as a partial expression index per
dimension: the first search of a large tenant without one starts building it in the
background (``IndexBuilder``: one builder across processes, ``CONCURRENTLY`` so writes go
on) and searches exactly until it is valid. A filtered HNSW scan
alone misses rows other tenants crowd out (measured in the issue: recall 0.09 at 1%
selectivity); ``hnsw.iterative_scan`` keeps scanning until the filtered LIMIT is filled
(recall 0.95), bounded by ``hnsw.max_scan_tuples``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import numpy as np
import psycopg
from psycopg.rows import tuple_row

from omoide.errors import StoreError
from omoide.store.postgres import counts
from omoide.store.postgres.counts import Counts
from omoide.store.postgres.db import Conn, connect

log = logging.getLogger("omoide.store")

EXACT_MAX = 20_000
EF_SEARCH = 100
MAX_SCAN_TUPLES = 50_000


# pgvector's defaults (m 16, ef_construction 64) made graphs a tenant's small clusters are hard
# to reach in: a LoCoMo conversation's turns among 100k other memories (docs/decisions/0002's
# stores), recall@10 against exact 0.853-0.976 at ef_search 200-240; ef_construction 256 gave
# 0.952-0.994, m 32 with 256 0.978, 512 0.986-0.999, for ~4.7x the build time of the defaults
# (bench/README.md, "HNSW graphs that reach small clusters").
INDEX_OPTIONS = "m = 16, ef_construction = 512"


def index_name(dim: int) -> str:
    return f"memory_vectors_hnsw2_{int(dim)}"


def older_index_names(dim: int) -> list[str]:
    """The indexes earlier releases built (pgvector's default options): they answer until this
    release's is built, then they are dropped."""
    return [f"memory_vectors_hnsw_{int(dim)}"]


def create_index(conn: Conn, dim: int) -> None:
    """The HNSW index for vectors of ``dim`` dimensions (``conn`` in autocommit: built
    ``CONCURRENTLY``, so writers are not blocked while it builds), then the older ones go."""
    dim = int(dim)
    conn.execute(
        f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {index_name(dim)} ON memory_vectors"
        f" USING hnsw ((embedding::vector({dim})) vector_ip_ops) WITH ({INDEX_OPTIONS})"
        f" WHERE vector_dims(embedding) = {dim}"
    )
    if _index_state(conn, dim) is True:
        for older in older_index_names(dim):
            conn.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {older}")


def has_index(conn: Conn, dim: int) -> bool:
    """Whether the index exists and is valid (a build that was interrupted leaves an invalid
    one, which the planner never uses)."""
    return _index_state(conn, dim) is True


def has_older_index(conn: Conn, dim: int) -> bool:
    """Whether a valid index of an earlier release exists (it answers meanwhile)."""
    return any(_index_state(conn, dim, name) is True for name in older_index_names(dim))


def _index_state(conn: Conn, dim: int, name: str | None = None) -> bool | None:
    """``True`` valid, ``False`` present but invalid, ``None`` absent (``name``: this
    release's index by default)."""
    row = conn.execute(
        "SELECT i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
        " WHERE c.relname = %s AND c.relnamespace = current_schema()::regnamespace",
        (name or index_name(dim),),
    ).fetchone()
    return None if row is None else bool(row["valid"])


_BUILD_LOCK = 0x6F6D6F69  # an advisory-lock key of our own: one builder across processes


class IndexBuilder:
    """Builds the HNSW index of a dimension in a background thread, once per process at a
    time; across processes an advisory lock lets one build while the others keep searching
    exactly. An invalid index left by an interrupted build is dropped and built again."""

    def __init__(self, url: str) -> None:
        self._url = url
        self._lock = threading.Lock()
        self._running: set[int] = set()
        self._retiring: set[int] = set()

    def request(self, dim: int) -> None:
        with self._lock:
            if dim in self._running:
                return
            self._running.add(dim)
        self._start(self._build, dim, "omoide-hnsw-build")

    def retire_older(self, dim: int) -> None:
        """Drop an earlier release's indexes of ``dim`` (once per process: this release's is
        valid). During a rolling upgrade a process of the earlier release may build its own
        again after this release's replaced it; every insert would then keep two graphs."""
        with self._lock:
            if dim in self._retiring:
                return
            self._retiring.add(dim)
        self._start(self._retire, dim, "omoide-hnsw-retire")

    def _start(self, target: Callable[[int], None], dim: int, name: str) -> None:
        threading.Thread(target=target, args=(dim,), name=name, daemon=True).start()

    def _retire(self, dim: int) -> None:
        try:
            with connect(self._url) as conn:
                for older in older_index_names(dim):
                    if _index_state(conn, dim, older) is not None:
                        conn.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {older}")
                        log.info("dropped %s: this release's HNSW index replaces it", older)
        except (psycopg.Error, StoreError) as exc:
            # It only costs inserts; the next process retries.
            log.warning("could not drop an earlier release's HNSW index (%s)", exc)

    def _build(self, dim: int) -> None:
        try:
            with connect(self._url) as conn:
                got = conn.execute(
                    "SELECT pg_try_advisory_lock(%s, %s) AS ok", (_BUILD_LOCK, dim)
                ).fetchone()
                if got is None or not got["ok"]:
                    return  # another process is building it
                if _index_state(conn, dim) is False:
                    conn.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {index_name(dim)}")
                log.info("building the HNSW index of %d-dimension vectors", dim)
                create_index(conn, dim)
                log.info("HNSW index of %d-dimension vectors built", dim)
        except (psycopg.Error, StoreError) as exc:  # searches stay exact; the next one retries
            log.warning("HNSW index build failed (%s): searches stay exact", exc)
        finally:
            with self._lock:
                self._running.discard(dim)


# The tenant's vectors sorted by distance alone, then joined to their memories in that order:
# the filters and the tie-break on seq need the memory rows, and this way the search reads only
# as many of them as the limit takes (an incremental sort on the presorted distance), not one
# per vector (measured on a 1,000-vector tenant: 6.4 -> 2.6 ms). OFFSET 0 keeps the subquery's
# sort from being planned away. Each memory is read by its key in a subquery of its own, which
# the filters cannot enter (OFFSET 0 again): on tables never analyzed the planner, guessing one
# row per tenant, otherwise scanned the tenant's memories once per hit. ``-(distance)`` is exact
# in floats, so "score DESC, seq" orders as "distance, seq" does.
_EXACT = (
    "SELECT m.id, m.seq, -n.distance AS score FROM ("
    "SELECT v.user_id, v.memory_id, v.embedding <#> %s AS distance FROM memory_vectors v"
    " WHERE v.user_id = %s AND v.scope_id = %s AND vector_dims(v.embedding) = %s"
    " ORDER BY distance OFFSET 0) n"
    " CROSS JOIN LATERAL (SELECT * FROM memories m"
    " WHERE m.user_id = n.user_id AND m.id = n.memory_id OFFSET 0) m"
    " WHERE {where} ORDER BY n.distance, m.seq LIMIT %s"
)


def exact_sql(where: str) -> str:
    """The exact search of a tenant's vectors of one dimension under ``where``, nearest first;
    its parameters: the query, user id, scope id, dimension, ``where``'s, the limit."""
    return _EXACT.format(where=where)


def exact_if_small_sql(where: str) -> str:
    """The tenant's counts and, when it is small, its exact search (``exact_if_small``); its
    parameters: user id, scope id, the query, user id, scope id, dimension, ``where``'s, the
    limit. The exact scan sits behind a one-time filter on the counts, so a large tenant's
    costs nothing; the counters' row comes back even without a hit. The filter refers to the
    lateral ``c`` at the subquery's top, so it gates the whole plan: inside the scan's WHERE
    it gated only the scan, below a parallel Gather whose workers started anyway, for
    nothing in a large tenant (bench/README.md has the measurement)."""
    return (
        f"WITH c AS ({counts.SQL}) SELECT c.memories, c.vectors, c.avgdl, c.deltas, h.id, h.score"
        " FROM c LEFT JOIN LATERAL ("
        + _EXACT.format(where=f"({where}) AND c.vectors <= {EXACT_MAX}")
        + ") h ON true ORDER BY h.score DESC, h.seq"
    )


def exact_if_small(
    conn: Conn,
    user_id: str,
    scope_id: str,
    query: np.ndarray,
    where: tuple[str, list[object]],
    limit: int,
) -> tuple[Counts, list[tuple[str, float]] | None]:
    """The tenant's counts and, when it is small (at most ``EXACT_MAX`` vectors), its exact
    nearest vectors, in one statement; ``None`` for a large tenant (then ``search``)."""
    dim = int(query.shape[0])
    params = (user_id, scope_id, query, user_id, scope_id, dim, *where[1], limit)
    with conn.cursor(row_factory=tuple_row) as cursor:  # its hits decode faster as tuples
        found = cursor.execute(exact_if_small_sql(where[0]), params).fetchall()
    memories, vectors, avgdl, deltas = found[0][:4]
    tally = Counts(
        memories=int(memories), avgdl=float(avgdl), vectors=int(vectors), deltas=int(deltas)
    )
    if tally.vectors > EXACT_MAX:
        return tally, None
    return tally, [(str(r[4]), float(r[5])) for r in found if r[4] is not None]


def approximate_sql(dim: int, where: str) -> str:
    """The query the HNSW index answers: its expression and its predicate, literally (a
    partial index is used only when the planner can prove the predicate from constants)."""
    dim = int(dim)
    expr = f"(v.embedding::vector({dim}))"
    return (
        f"SELECT m.id, -({expr} <#> %s::vector({dim})) AS score FROM memory_vectors v"
        " JOIN memories m ON m.user_id = v.user_id AND m.id = v.memory_id"
        f" WHERE v.user_id = %s AND v.scope_id = %s AND vector_dims(v.embedding) = {dim}"
        f" AND {where} ORDER BY {expr} <#> %s::vector({dim}) LIMIT %s"
    )


def search(
    conn: Conn,
    user_id: str,
    scope_id: str,
    query: np.ndarray,
    where: tuple[str, list[object]],
    limit: int,
    vectors: int,
    builder: IndexBuilder | None = None,
) -> list[tuple[str, float]]:
    """The tenant's nearest vectors: exact while the tenant is small (``vectors``: its count,
    from its counters) or no valid index exists (then ``builder`` is asked to build one)."""
    dim = int(query.shape[0])
    tenant = (user_id, scope_id)
    large = vectors > EXACT_MAX
    indexed = large and has_index(conn, dim)
    if indexed and builder is not None:
        builder.retire_older(dim)
    if large and not indexed:
        if builder is not None:
            builder.request(dim)
        indexed = has_older_index(conn, dim)  # until this release's index is built
    if indexed:
        # one round trip for the three settings (SET LOCAL = set_config(..., true))
        conn.execute(
            "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true),"
            " set_config('hnsw.ef_search', %s, true), set_config('hnsw.max_scan_tuples', %s, true)",
            (str(max(EF_SEARCH, 2 * int(limit))), str(MAX_SCAN_TUPLES)),
        )
        cursor = conn.execute(
            approximate_sql(dim, where[0]), (query, *tenant, *where[1], query, limit)
        )
        # relaxed_order may return neighbours slightly out of order: sort what came back
        found = [(str(r["id"]), float(r["score"])) for r in cursor]
        return sorted(found, key=lambda hit: -hit[1])
    cursor = conn.execute(exact_sql(where[0]), (query, *tenant, dim, *where[1], limit))
    return [(str(r["id"]), float(r["score"])) for r in cursor]
