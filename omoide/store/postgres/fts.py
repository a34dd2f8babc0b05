"""Keyword search on PostgreSQL full text, ranked by bm25 with per-tenant statistics.

The score is FTS5's bm25 (k1 = 1.2, b = 0.75, IDF ``ln((N - df + 0.5) / (df + 0.5))`` floored at
1e-6, column weights 1.0 for the memory's text and 0.4 for its neighbour context, the document
length counting every token), returned positive, higher is better: the scale the SQLite
backend returns. Unlike FTS5, whose N, df and average length are the whole index's, the
statistics here are the tenant's own rows (valid or not, as FTS5 counts them), so a tenant's
ranking never depends on other tenants' data. N and the average length come from the
tenant's counters (``counts``, kept by triggers), not from a count over its rows.

Query terms go through the same folding and stemming as the rows (``memories_tsv`` trigger);
each resulting lexeme is one OR-ed query term, looked up as a value (never tsquery syntax) in
``memory_terms``: the tenant's postings, one row per (memory, lexeme) with its weighted term
frequency, kept from the rows' tsvectors by triggers (migration 0006), keyed by the memory's
seq (0008; the best rows go back to their ids through ``memories_seq``). Frequent lexemes of a
large tenant are pruned as on SQLite (``omoide.store.pruning``), on document frequencies
kept by triggers as delta rows (``lexeme_counts``, migration 0007; folded with the tenant's
counters by ``counts.compact``); ranking reuses them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from psycopg.rows import DictRow, tuple_row

from omoide.store import pruning
from omoide.store.postgres import counts
from omoide.store.postgres.arrays import int_array
from omoide.store.postgres.counts import Counts
from omoide.store.postgres.db import Conn
from omoide.store.postgres.postings import PostingsCache
from omoide.store.pruning import COMMON_SHARE, MIN_DOCS, POSTINGS_MAX, RESCORE_DEPTH
from omoide.store.sql.postings import best, summed

K1 = 1.2
B = 0.75
# as memory_postings (migrations 0006, 0009) weighs a lexeme's positions:
TEXT_WEIGHT = 1.0  # tsvector weight A: the memory's own text
CONTEXT_WEIGHT = 0.4  # weight B: the neighbouring turns

# One statement, so one round trip and one snapshot: the tenant's counters (``c``), the query's
# lexemes and their document frequencies (every row of the tenant holding one, valid or not, as FTS5
# counts them: the sum of its delta rows in ``lexeme_counts``, migration 0007), the pruning of
# ``omoide.store.pruning`` (``kept``), then each row's bm25 score from the tenant's postings of the
# kept lexemes (an index-only range scan each), the best ``RESCORE_DEPTH`` of them scored again with
# the pruned lexemes too and re-ranked ahead of the rest, as ``pruning.rescore`` does: one index
# scan per pruned lexeme over the best rows' seqs as an array, which PostgreSQL's btree walks in
# order (one probe per lexeme and row before: keyword statement at 100k memories in one tenant, p50
# 10.9 -> 9.3 ms, the same hits). The pruning walks the lexemes rarest first (ties by code point, as
# Python sorts strings) and stops at the first that is too common or would push the postings past
# their share: both limits only grow along that order, so "kept" is the first lexeme and every later
# one within both limits. Its comparisons are float8, as Python's. Rows are then probed in score
# order for the caller's filters (by seq, through ``memories_seq``): the sorted subquery feeds a
# nested loop, so the LIMIT stops after about ``limit`` probes instead of joining every matching
# row. Each row's terms are summed in lexeme order, whatever the plan: rows of equal text then score
# bit for bit the same, and their ties go by seq. The counters' row comes back even without a hit
# (``LEFT JOIN``): the caller folds them when they are many.
_STATS = f"""
WITH c AS ({counts.SQL}),
q AS (SELECT DISTINCT u.lexeme FROM unnest(to_tsvector('omoide_fts', omoide_fold(%s))) u),
f AS MATERIALIZED (  -- each df summed once, not once per reference
    SELECT q.lexeme, (SELECT coalesce(sum(l.df), 0)::bigint FROM lexeme_counts l
        WHERE l.user_id = %s AND l.scope_id = %s AND l.lexeme = q.lexeme) AS df
    FROM q
),
present AS (
    SELECT lexeme, df, row_number() OVER w AS rn, (sum(df) OVER w)::float8 AS postings,
        count(*) OVER () AS n
    FROM f WHERE df > 0
    WINDOW w AS (ORDER BY df, lexeme COLLATE "C" ROWS UNBOUNDED PRECEDING)
),
kept AS (
    SELECT p.lexeme, p.df FROM present p, c
    WHERE c.memories < {MIN_DOCS} OR p.n < 2 OR p.rn = 1
        OR (p.df::float8 < {COMMON_SHARE!r}::float8 * c.memories
            AND p.postings <= {POSTINGS_MAX})
)"""
_SEARCH = f"""{_STATS},
idf AS (
    SELECT kept.lexeme, greatest(ln((c.memories::float8 - kept.df + 0.5) / (kept.df + 0.5)), 1e-6)
        AS idf
    FROM kept, c
),
scored AS (
    SELECT p.seq, sum(idf.idf * (p.w * {K1 + 1})
        / (p.w + {K1} * (1 - {B} + {B} * p.doc_len / (SELECT avgdl FROM c))) ORDER BY p.lexeme)
        AS score
    FROM memory_terms p JOIN idf ON idf.lexeme = p.lexeme
    WHERE p.user_id = %s AND p.scope_id = %s
        AND p.lexeme = ANY((SELECT array_agg(lexeme) FROM kept)::text[])
    GROUP BY p.seq
),
dropped AS MATERIALIZED (
    SELECT p.lexeme, greatest(ln((c.memories::float8 - p.df + 0.5) / (p.df + 0.5)), 1e-6) AS idf
    FROM present p, c WHERE p.lexeme NOT IN (SELECT lexeme FROM kept)
),
ordered AS (
    SELECT seq, score, row_number() OVER (ORDER BY score DESC, seq) AS rn FROM scored
),
head AS MATERIALIZED (SELECT seq, score FROM ordered WHERE rn <= {RESCORE_DEPTH}),
extra AS (
    SELECT t.seq, sum(d.idf * (t.w * {K1 + 1})
        / (t.w + {K1} * (1 - {B} + {B} * t.doc_len / (SELECT avgdl FROM c))) ORDER BY t.lexeme)
        AS score
    FROM dropped d JOIN memory_terms t ON t.user_id = %s AND t.scope_id = %s
        AND t.lexeme = d.lexeme AND t.seq = ANY((SELECT array_agg(seq) FROM head)::bigint[])
    GROUP BY t.seq
),
ranked AS (
    SELECT h.seq, h.score + coalesce(x.score, 0) AS score, false AS tail
    FROM head h LEFT JOIN extra x ON x.seq = h.seq
    UNION ALL
    SELECT seq, score, true FROM ordered WHERE rn > {RESCORE_DEPTH}
)
SELECT c.memories, c.vectors, c.avgdl, c.deltas, h.id, h.score
FROM c LEFT JOIN LATERAL (
    SELECT f.id, r.seq, r.tail, r.score
    FROM (SELECT seq, tail, score FROM ranked ORDER BY tail, score DESC, seq) r
    CROSS JOIN LATERAL (
        SELECT m.id FROM memories m WHERE m.user_id = %s AND m.seq = r.seq AND ({{where}})
        LIMIT 1
    ) f
    ORDER BY r.tail, r.score DESC, r.seq
    LIMIT %s
) h ON true
ORDER BY h.tail, h.score DESC, h.seq
"""


# The same statistics and pruning, for a ranking from the in-process lists (``rank``): each
# present lexeme, whether it is kept, and its idf as the statement above computes it, in the
# order its sums add them (``ORDER BY lexeme``: the database's collation).
_PLAN = f"""{_STATS}
SELECT c.memories, c.avgdl, p.lexeme, p.df, p.lexeme IN (SELECT lexeme FROM kept) AS kept,
    greatest(ln((c.memories::float8 - p.df + 0.5) / (p.df + 0.5)), 1e-6) AS idf
FROM c LEFT JOIN present p ON true
ORDER BY p.lexeme
"""


def quote(lexeme: str) -> str:
    """``lexeme`` as one quoted tsquery operand: quotes doubled, backslashes escaped."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def search(
    conn: Conn,
    user_id: str,
    scope_id: str,
    terms: Sequence[str],
    where: tuple[str, list[Any]],
    limit: int,
) -> tuple[list[tuple[str, float]], Counts]:
    """``(memory id, bm25 score)`` of the tenant's rows matching any term, best first, and
    the tenant's counts read in the same statement."""
    found = conn.execute(*search_statement(user_id, scope_id, terms, where, limit)).fetchall()
    return search_hits(found), counts.from_row(found[0])


def search_statement(
    user_id: str, scope_id: str, terms: Sequence[str], where: tuple[str, list[Any]], limit: int
) -> tuple[str, list[Any]]:
    """The statement of ``search``."""
    sql = _SEARCH.replace("{where}", where[0])
    tenant = [user_id, scope_id]
    params: list[Any] = [
        *tenant,
        " ".join(terms),
        *tenant,
        *tenant,
        *tenant,
        user_id,
        *where[1],
        limit,
    ]
    return sql, params


def search_hits(found: Sequence[DictRow]) -> list[tuple[str, float]]:
    """``search_statement``'s hits."""
    return [(str(r["id"]), float(r["score"])) for r in found if r["id"] is not None]


@dataclass(frozen=True)
class Plan:
    """What a query ranks in one tenant, as ``_SEARCH`` computes it: the kept and the pruned
    lexemes (each in the order the statement sums them), their document frequencies and idf,
    and the tenant's average document length."""

    avgdl: float
    kept: list[str]
    dropped: list[str]
    dfs: dict[str, int]
    idfs: dict[str, float]


def plan_statement(user_id: str, scope_id: str, terms: Sequence[str]) -> tuple[str, list[Any]]:
    """The statement whose rows ``plan`` reads."""
    return _PLAN, [user_id, scope_id, " ".join(terms), user_id, scope_id]


def plan(found: Sequence[DictRow]) -> Plan | None:
    """The plan of a query in a tenant from ``plan_statement``'s rows, or None when nothing
    can match."""
    present = [r for r in found if r["lexeme"] is not None]
    kept = [str(r["lexeme"]) for r in present if r["kept"]]
    if not kept:
        return None
    return Plan(
        float(present[0]["avgdl"]),
        kept,
        [str(r["lexeme"]) for r in present if not r["kept"]],
        {str(r["lexeme"]): int(r["df"]) for r in present},
        {str(r["lexeme"]): float(r["idf"]) for r in present},
    )


def rank(
    conn: Conn,
    cache: PostingsCache,
    user_id: str,
    scope_id: str,
    terms: Sequence[str],
    where: tuple[str, list[Any]],
    limit: int,
    *,
    end: bool = False,
) -> list[tuple[str, float]] | None:
    """What ``search`` returns, to the last bit, ranked from the in-process posting lists
    (``cache``) when they hold or may load every kept lexeme's list, else by ``search``.
    Run inside one ``REPEATABLE READ`` transaction (``Database.snapshot``), before any other
    statement of it (the cache catches up with the transaction's snapshot): the catch-up and
    the statistics take one round trip with its ``BEGIN``.

    ``end``: the transaction's ``COMMIT`` goes with the statement that looks up the ranked
    rows' ids through the caller's filters, in the same round trip, so a warm search costs
    two. None comes back when that first look-up kept fewer than ``limit`` rows while more
    rows matched (a filter most rows fail): the caller asks again in a new snapshot without
    ``end``, which probes further down the order in that snapshot."""
    if limit <= 0:
        return []
    version, planned = cache.catch_up(conn, plan_statement(user_id, scope_id, terms))
    query = plan(planned.fetchall())
    if query is None:
        return []
    tenant = (user_id, scope_id)
    lists = cache.lists(conn, version, tenant, query.kept, query.dfs)
    if lists is None:  # a long list not cached: the database scans it faster than we load it
        sql, params = search_statement(user_id, scope_id, terms, where, limit)
        return search_hits(_last(conn, sql, params, end))
    bm25 = _Bm25(query.avgdl)
    seqs, scores = summed(
        [(lists[t].seqs, bm25(query.idfs[t], lists[t].tf, lists[t].dl)) for t in query.kept]
    )
    n = max(RESCORE_DEPTH, 2 * limit + 10)
    ranked = _ranked(seqs, scores, n)
    if query.dropped:  # from cached lists mostly: no round trip
        ranked = _rescored(conn, cache, version, tenant, query, bm25, ranked)
    first = ranked[: 2 * limit + 10]
    sql, params = _ids(user_id, [s for s, _ in first], where)
    ids = {int(seq): str(i) for seq, i in _last_tuples(conn, sql, params, end)}
    hits = [(ids[s], score) for s, score in first if s in ids]
    probed = len(first)
    if end and len(hits) < limit and (probed < len(ranked) or n < len(seqs)):
        return None  # committed: further down the order needs a snapshot of its own
    while len(hits) < limit:
        if probed >= len(ranked):
            if n >= len(seqs):
                break
            n *= 4  # a filter most rows fail: further down the same order
            ranked = _ranked(seqs, scores, n)
            if query.dropped:
                ranked = _rescored(conn, cache, version, tenant, query, bm25, ranked)
            continue
        chunk = ranked[probed : probed + 2 * (limit - len(hits)) + 10]
        sql, params = _ids(user_id, [s for s, _ in chunk], where)
        ids = {int(r["seq"]): str(r["id"]) for r in conn.execute(sql, params).fetchall()}
        hits += [(ids[s], score) for s, score in chunk if s in ids]
        probed += len(chunk)
    return hits[:limit]


def _last(conn: Conn, sql: str, params: Sequence[Any], end: bool) -> list[DictRow]:
    """The rows of ``sql``, with the transaction's ``COMMIT`` behind it in one pipeline
    (one round trip) when ``end``."""
    if not end:
        return conn.execute(sql, params).fetchall()
    with conn.pipeline():  # nothing fetched inside: one round trip
        cursor = conn.execute(sql, params)
        conn.execute("COMMIT")
    return cursor.fetchall()


def _last_tuples(conn: Conn, sql: str, params: Sequence[Any], end: bool) -> list[tuple[Any, ...]]:
    """``_last`` with plain tuples for rows (the ids of a ranking's best rows)."""
    with conn.cursor(row_factory=tuple_row) as cursor:
        if not end:
            return cursor.execute(sql, params).fetchall()
        with conn.pipeline():  # nothing fetched inside: one round trip
            cursor.execute(sql, params)
            conn.execute("COMMIT")
        return cursor.fetchall()


class _Bm25:
    """Each posting's score as ``_SEARCH`` computes it, operation for operation: the same
    doubles in the same order (the constants are the statement's, numeric literals that
    PostgreSQL casts to the nearest double, as Python reads them)."""

    def __init__(self, avgdl: float) -> None:
        self._avgdl = avgdl

    def __call__(self, idf: float, w: np.ndarray, dl: np.ndarray) -> np.ndarray:
        norm = (1 - B) + B * dl / self._avgdl
        out: np.ndarray = idf * (w * (K1 + 1)) / (w + K1 * norm)
        return out


def _ranked(seqs: np.ndarray, scores: np.ndarray, n: int) -> list[tuple[int, float]]:
    order = best(seqs, scores, n)
    return list(zip(seqs[order].tolist(), scores[order].tolist(), strict=True))


def _rescored(
    conn: Conn,
    cache: PostingsCache,
    version: int,
    tenant: tuple[str, str],
    query: Plan,
    bm25: _Bm25,
    ranked: list[tuple[int, float]],
) -> list[tuple[int, float]]:
    """``ranked`` with its best ``RESCORE_DEPTH`` scored with the pruned lexemes too, summed
    in their order, and re-ranked ahead of the rest (``pruning.rescore``)."""
    head = np.array([s for s, _ in ranked[:RESCORE_DEPTH]], dtype=np.int64)
    order = np.argsort(head, kind="stable")
    ascending = head[order]
    extra = np.zeros(len(head))
    matched = np.zeros(len(head), dtype=bool)
    rows = cache.rows(conn, version, tenant, query.dropped, query.dfs, ascending)
    for term in query.dropped:
        found = rows[term]
        if not len(found.seqs):
            continue
        at = np.minimum(np.searchsorted(found.seqs, ascending), len(found.seqs) - 1)
        hit = found.seqs[at] == ascending
        at = at[hit]
        extra[hit] += bm25(query.idfs[term], found.tf[at], found.dl[at])
        matched |= hit
    more = dict(zip(ascending[matched].tolist(), extra[matched].tolist(), strict=True))
    return pruning.rescore(ranked, more, RESCORE_DEPTH)


def _ids(user_id: str, seqs: list[int], where: tuple[str, list[Any]]) -> tuple[str, list[Any]]:
    """The statement of the seqs and ids of the memories ``seqs`` that pass the caller's
    filters."""
    return (
        "SELECT m.seq, m.id FROM memories m WHERE m.user_id = %s AND m.seq = ANY(%s::bigint[])"
        f" AND ({where[0]})",
        [user_id, int_array(seqs), *where[1]],
    )
