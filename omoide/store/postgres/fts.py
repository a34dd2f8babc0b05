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
frequency, kept from the rows' tsvectors by triggers (migration 0006). Frequent lexemes of a
large tenant are pruned as on SQLite (``omoide.store.pruning``), on document frequencies
counted once (index-only) over the postings; ranking reuses them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from omoide.store.postgres.counts import Counts
from omoide.store.postgres.db import Conn
from omoide.store.pruning import prune

K1 = 1.2
B = 0.75
# as memory_postings (migration 0006) weighs a lexeme's positions:
TEXT_WEIGHT = 1.0  # tsvector weight A: the memory's own text
CONTEXT_WEIGHT = 0.4  # weight B: the neighbouring turns

_LEXEMES = (
    "SELECT DISTINCT u.lexeme FROM unnest(to_tsvector('omoide_fts', omoide_fold(%s))) u"
    " ORDER BY u.lexeme"
)
# Each kept lexeme's document frequency comes in (``_FREQUENCIES``, read first for the
# pruning: every row of the tenant holding it, valid or not, as FTS5 counts them); the
# tenant's postings of those lexemes (an index-only range scan each) give each row's bm25
# score. Rows are then probed in score order for the caller's filters: the sorted subquery
# feeds a nested loop, so the LIMIT stops after about ``limit`` primary-key probes instead of
# joining every matching row. Each row's terms are summed in lexeme order, whatever the plan:
# rows of equal text then score bit for bit the same, and their ties go by seq.
_SEARCH = f"""
WITH idf AS (
    SELECT lexeme, greatest(ln((%s::float8 - df + 0.5) / (df + 0.5)), 1e-6) AS idf
    FROM unnest(%s::text[], %s::bigint[]) AS q(lexeme, df)
),
scored AS (
    SELECT p.memory_id, p.seq, sum(idf.idf * (p.w * {K1 + 1})
        / (p.w + {K1} * (1 - {B} + {B} * p.doc_len / %s::float8)) ORDER BY p.lexeme) AS score
    FROM memory_terms p JOIN idf ON idf.lexeme = p.lexeme
    WHERE p.user_id = %s AND p.scope_id = %s AND p.lexeme = ANY(%s::text[])
    GROUP BY p.memory_id, p.seq
)
SELECT r.memory_id AS id, r.score
FROM (SELECT memory_id, seq, score FROM scored ORDER BY score DESC, seq) r
CROSS JOIN LATERAL (
    SELECT 1 FROM memories m WHERE m.user_id = %s AND m.id = r.memory_id AND ({{where}}) LIMIT 1
) f
ORDER BY r.score DESC, r.seq
LIMIT %s
"""
_FREQUENCIES = """
SELECT lexeme, count(*) AS df FROM memory_terms
WHERE user_id = %s AND scope_id = %s AND lexeme = ANY(%s::text[]) GROUP BY lexeme
"""


def quote(lexeme: str) -> str:
    """``lexeme`` as one quoted tsquery operand: quotes doubled, backslashes escaped."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def lexemes(conn: Conn, terms: Sequence[str]) -> list[str]:
    """The distinct stemmed lexemes of ``terms`` (what the rows' vectors hold)."""
    found = conn.execute(_LEXEMES, (" ".join(terms),)).fetchall()
    return [str(r["lexeme"]) for r in found]


def frequencies(conn: Conn, user_id: str, scope_id: str, found: list[str]) -> dict[str, int]:
    """The tenant's document frequency of each of ``found`` it holds."""
    rows = conn.execute(_FREQUENCIES, (user_id, scope_id, found)).fetchall()
    return {str(r["lexeme"]): int(r["df"]) for r in rows}


def search(
    conn: Conn,
    user_id: str,
    scope_id: str,
    terms: Sequence[str],
    where: tuple[str, list[Any]],
    limit: int,
    counts: Counts,
) -> list[tuple[str, float]]:
    """``(memory id, bm25 score)`` of the tenant's rows matching any term, best first;
    ``counts`` are the tenant's, read in the same snapshot."""
    found = lexemes(conn, terms)
    if not found:
        return []
    dfs = frequencies(conn, user_id, scope_id, found)
    kept = prune(found, dfs, counts.memories)  # only the lexemes the tenant holds
    if not kept:
        return []
    sql = _SEARCH.replace("{where}", where[0])
    idf = [counts.memories, kept, [dfs[lexeme] for lexeme in kept]]
    params: list[Any] = [*idf, counts.avgdl, user_id, scope_id, kept, user_id, *where[1], limit]
    return [(str(r["id"]), float(r["score"])) for r in conn.execute(sql, params)]
