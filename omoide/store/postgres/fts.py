"""Keyword search on PostgreSQL full text, ranked by bm25 with per-tenant statistics.

The score is FTS5's bm25 (k1 = 1.2, b = 0.75, IDF ``ln((N - df + 0.5) / (df + 0.5))`` floored at
1e-6, column weights 1.0 for the memory's text and 0.4 for its neighbour context, the document
length counting every token), returned positive, higher is better: the scale the SQLite
backend returns. Unlike FTS5, whose N, df and average length are the whole index's, the
statistics here are the tenant's own rows (valid or not, as FTS5 counts them), so a tenant's
ranking never depends on other tenants' data. N and the average length come from the
tenant's counters (``counts``, kept by triggers), not from a count over its rows.

Query terms go through the same folding and stemming as the rows (``memories_tsv`` trigger),
each resulting lexeme is one OR-ed query term, and each lexeme is quoted: a term is never
tsquery syntax. Frequent lexemes of a large tenant are pruned as on SQLite
(``omoide.store.pruning``): their document frequencies come from one GIN count each, only when
the tenant holds ``MIN_DOCS`` memories and there are two lexemes or more.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from omoide.store.postgres.counts import Counts
from omoide.store.postgres.db import Conn
from omoide.store.pruning import MIN_DOCS, prune

K1 = 1.2
B = 0.75
TEXT_WEIGHT = 1.0  # tsvector weight A: the memory's own text
CONTEXT_WEIGHT = 0.4  # weight B: the neighbouring turns

_LEXEMES = (
    "SELECT DISTINCT u.lexeme FROM unnest(to_tsvector('omoide_fts', omoide_fold(%s))) u"
    " ORDER BY u.lexeme"
)
_TOKEN = "('t' || md5(%s || chr(31) || %s))::tsquery"

# One GIN scan finds the tenant's rows holding any query lexeme (filters aside: FTS5 counts
# every row in its statistics); their vectors, unnested once, give both each lexeme's document
# frequency and each row's term frequencies per weight. The caller's filters only decide which
# of those rows are ranked.
_SEARCH = f"""
WITH stats AS (SELECT %s::float8 AS n, %s::float8 AS avgdl),
matched AS MATERIALIZED (
    SELECT m.id, m.seq, m.doc_len, m.tsv, ({{where}}) AS keep FROM memories m
    WHERE m.user_id = %s AND m.scope_id = %s AND m.tsv @@ (%s::tsquery && {_TOKEN})
),
tf AS (
    SELECT mt.id, mt.seq, mt.doc_len, mt.keep, u.lexeme,
        (SELECT coalesce(sum(CASE wt WHEN 'A' THEN {TEXT_WEIGHT} WHEN 'B' THEN {CONTEXT_WEIGHT}
                                ELSE 0 END), 0) FROM unnest(u.weights) wt) AS w
    FROM matched mt CROSS JOIN LATERAL unnest(mt.tsv) u
    WHERE u.lexeme = ANY(%s::text[])
),
idf AS (
    SELECT tf.lexeme, greatest(ln((st.n - count(*) + 0.5) / (count(*) + 0.5)), 1e-6) AS idf
    FROM tf CROSS JOIN stats st GROUP BY tf.lexeme, st.n
)
SELECT tf.id, sum(idf.idf * (tf.w * {K1 + 1})
                  / (tf.w + {K1} * (1 - {B} + {B} * tf.doc_len / st.avgdl))) AS score
FROM tf JOIN idf ON idf.lexeme = tf.lexeme CROSS JOIN stats st
WHERE tf.keep
GROUP BY tf.id, tf.seq
ORDER BY score DESC, tf.seq
LIMIT %s
"""


_FREQUENCIES = f"""
SELECT q.lexeme, (SELECT count(*) FROM memories m WHERE m.user_id = %s AND m.scope_id = %s
                  AND m.tsv @@ (q.query && {_TOKEN})) AS df
FROM unnest(%s::text[], %s::tsquery[]) AS q(lexeme, query)
"""


def quote(lexeme: str) -> str:
    """``lexeme`` as one quoted tsquery operand: quotes doubled, backslashes escaped."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def lexemes(conn: Conn, terms: Sequence[str]) -> list[str]:
    """The distinct stemmed lexemes of ``terms`` (what the rows' vectors hold)."""
    found = conn.execute(_LEXEMES, (" ".join(terms),)).fetchall()
    return [str(r["lexeme"]) for r in found]


def ranked_lexemes(
    conn: Conn, user_id: str, scope_id: str, found: list[str], docs: int
) -> list[str]:
    """``found`` without the lexemes pruning drops for this tenant of ``docs`` memories (see
    the module docstring)."""
    if len(found) < 2 or docs < MIN_DOCS:
        return found
    tenant = (user_id, scope_id)
    rows = conn.execute(
        _FREQUENCIES, (*tenant, *tenant, found, [quote(lexeme) for lexeme in found])
    ).fetchall()
    return prune(found, {str(r["lexeme"]): int(r["df"]) for r in rows}, docs)


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
    found = ranked_lexemes(conn, user_id, scope_id, lexemes(conn, terms), counts.memories)
    if not found:
        return []
    query = " | ".join(quote(lexeme) for lexeme in found)
    sql = _SEARCH.replace("{where}", where[0])
    tenant = (user_id, scope_id)
    stats = (counts.memories, counts.avgdl)
    params: list[Any] = [*stats, *where[1], *tenant, query, *tenant, found, limit]
    return [(str(r["id"]), float(r["score"])) for r in conn.execute(sql, params)]
