"""Keyword search on PostgreSQL full text, ranked by bm25 with per-tenant statistics.

The score is FTS5's bm25 (k1 = 1.2, b = 0.75, IDF ``ln((N - df + 0.5) / (df + 0.5))`` floored at
1e-6, column weights 1.0 for the memory's text and 0.4 for its neighbour context, the document
length counting every token), returned positive, higher is better: the scale the SQLite
backend returns. Unlike FTS5, whose N, df and average length are the whole index's, the
statistics here are the tenant's own rows (valid or not, as FTS5 counts them), so a tenant's
ranking never depends on other tenants' data.

Query terms go through the same folding and stemming as the rows (``memories_tsv`` trigger),
each resulting lexeme is one OR-ed query term, and each lexeme is quoted: a term is never
tsquery syntax.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from omoide.store.postgres.db import Conn

K1 = 1.2
B = 0.75
TEXT_WEIGHT = 1.0  # tsvector weight A: the memory's own text
CONTEXT_WEIGHT = 0.4  # weight B: the neighbouring turns

_LEXEMES = (
    "SELECT DISTINCT u.lexeme FROM unnest(to_tsvector('omoide_fts', omoide_fold(%s))) u"
    " ORDER BY u.lexeme"
)
_TOKEN = "('t' || md5(%s || chr(31) || %s))::tsquery"

_SEARCH = f"""
WITH stats AS (
    SELECT count(*)::float8 AS n, greatest(coalesce(avg(doc_len), 1), 1)::float8 AS avgdl
    FROM memories WHERE user_id = %s AND scope_id = %s
),
terms AS (
    SELECT t.lexeme, greatest(ln((st.n - d.df + 0.5) / (d.df + 0.5)), 1e-6) AS idf
    FROM unnest(%s::text[], %s::text[]) AS t(lexeme, query)
    CROSS JOIN stats st
    CROSS JOIN LATERAL (
        SELECT count(*)::float8 AS df FROM memories d
        WHERE d.user_id = %s AND d.scope_id = %s AND d.tsv @@ (t.query::tsquery && {_TOKEN})
    ) d
),
hits AS (
    SELECT m.id, m.seq, m.doc_len, m.tsv FROM memories m
    WHERE m.tsv @@ (%s::tsquery && {_TOKEN}) AND {{where}}
)
SELECT h.id, sum(t.idf * (f.w * {K1 + 1}) / (f.w + {K1} * (1 - {B} + {B} * h.doc_len / st.avgdl)))
    AS score
FROM hits h
CROSS JOIN LATERAL unnest(h.tsv) u
JOIN terms t ON t.lexeme = u.lexeme
CROSS JOIN LATERAL (
    SELECT coalesce(sum(CASE wt WHEN 'A' THEN {TEXT_WEIGHT} WHEN 'B' THEN {CONTEXT_WEIGHT}
                               ELSE 0 END), 0) AS w
    FROM unnest(u.weights) wt
) f
CROSS JOIN stats st
GROUP BY h.id, h.seq
ORDER BY score DESC, h.seq
LIMIT %s
"""


def quote(lexeme: str) -> str:
    """``lexeme`` as one quoted tsquery operand: quotes doubled, backslashes escaped."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def lexemes(conn: Conn, terms: Sequence[str]) -> list[str]:
    """The distinct stemmed lexemes of ``terms`` (what the rows' vectors hold)."""
    found = conn.execute(_LEXEMES, (" ".join(terms),)).fetchall()
    return [str(r["lexeme"]) for r in found]


def search(
    conn: Conn,
    user_id: str,
    scope_id: str,
    terms: Sequence[str],
    where: tuple[str, list[Any]],
    limit: int,
) -> list[tuple[str, float]]:
    """``(memory id, bm25 score)`` of the tenant's rows matching any term, best first."""
    found = lexemes(conn, terms)
    if not found:
        return []
    queries = [quote(lexeme) for lexeme in found]
    sql = _SEARCH.replace("{where}", where[0])
    tenant = (user_id, scope_id)
    params: list[Any] = [*tenant, found, queries, *tenant, *tenant]
    params += [" | ".join(queries), *tenant, *where[1], limit]
    return [(str(r["id"]), float(r["score"])) for r in conn.execute(sql, params)]
