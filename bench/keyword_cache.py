"""SQLite keyword ranking from the posting-list cache vs. the SQL ranking it replaced.

    python bench/scale.py --scenarios one-100k --db-dir DIR          # once: keeps DIR/one-100k.db
    python bench/keyword_cache.py DIR/one-100k.db [--queries 200] [--tenants 1]

One engine over the store; ``keyword.rank`` (``omoide/store/sqlite/postings.py``'s numpy
arrays) and ``sql_rank`` below (the GROUP BY and key lookups it replaced, kept here as the
baseline) take turns, question by question, alternating which goes first. Two passes over the
questions: the first starts with an empty cache (each list is read from the file once), the
second is warm. Timed: hybrid search (query embedding included) and the keyword port call
alone. Also counts the questions both answer with the same hits and scores.
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import time
from collections.abc import Callable, Sequence
from typing import Any

from common import machine_note, percentiles_ms, table
from scale import questions

from omoide.config import Settings
from omoide.embed import build_embedder
from omoide.memory import Memory
from omoide.retrieval.terms import keyword_terms
from omoide.store import pruning
from omoide.store.sqlite import keyword
from omoide.store.sqlite.postings import PostingsCache
from omoide.types import Scope, SearchFilters

Rank = Callable[..., list[tuple[int, float]]]


def sql_rank(
    conn: sqlite3.Connection,
    tokenizer: keyword.Tokenizer,
    postings: PostingsCache,  # noqa: ARG001 - the baseline reads every list from the file
    tenant: str,
    words: Sequence[str],
    limit: int,
) -> list[tuple[int, float]]:
    """The ranking before the cache: scored and summed in SQLite, pruned terms by key lookup."""
    query = keyword.plan(conn, tokenizer, tenant, words) if limit > 0 else None
    if query is None:
        return []
    docs, avgdl, dfs, kept, left_out = (
        query.docs,
        query.avgdl,
        query.dfs,
        query.kept,
        query.left_out,
    )
    depth = pruning.RESCORE_DEPTH if left_out else 0
    k1, b = keyword.K1, keyword.B
    params = (k1 + 1.0, k1 * (1.0 - b), k1 * b / avgdl, tenant)
    weights = ",".join("(?, ?)" for _ in kept)
    found = conn.execute(
        f"WITH q(term, idf) AS (VALUES {weights})"
        " SELECT p.memory_seq, sum(q.idf * p.tf * ? / (p.tf + ? + ? * p.dl)) AS score"
        " FROM q JOIN kw_postings p ON p.tenant = ? AND p.term = q.term"
        " GROUP BY p.memory_seq ORDER BY score DESC, p.memory_seq LIMIT ?",
        (*(v for t in kept for v in (t, keyword.idf(docs, dfs[t]))), *params, max(limit, depth)),
    ).fetchall()
    ranked = [(int(seq), float(score)) for seq, score in found]
    if not depth or not ranked:
        return ranked[:limit]
    head = ranked[:depth]
    weights = ",".join("(?, ?)" for _ in left_out)
    seqs = ",".join("(?)" for _ in head)
    extra = conn.execute(
        f"WITH q(term, idf) AS (VALUES {weights}), c(seq) AS (VALUES {seqs})"
        " SELECT p.memory_seq, sum(q.idf * p.tf * ? / (p.tf + ? + ? * p.dl))"
        " FROM q CROSS JOIN c JOIN kw_postings p"
        "  ON p.tenant = ? AND p.term = q.term AND p.memory_seq = c.seq"
        " GROUP BY p.memory_seq",
        (
            *(v for t in left_out for v in (t, keyword.idf(docs, dfs[t]))),
            *sorted(seq for seq, _ in head),
            *params,
        ),
    ).fetchall()
    return pruning.rescore(ranked, {int(s): float(x) for s, x in extra}, depth)[:limit]


def run(db: str, n_queries: int, tenants: int) -> dict[str, Any]:
    engine = Memory(db, embedder=build_embedder(Settings()), workers=0)
    qs = questions(n_queries)
    engine.search(qs[0], user_id="user0", limit=10)  # loads the vectors (or the graph)
    engine.store._vectors.wait_for_builds()
    cached: Rank = keyword.rank
    ways: dict[str, Rank] = {"cache": cached, "sql": sql_rank}
    rng = random.Random(7)
    users = [f"user{rng.randrange(tenants)}" for _ in qs]
    out: dict[str, Any] = {"machine": machine_note(), "queries": len(qs), "tenants": tenants}
    for pass_name in ("first pass (cache empty)", "second pass (warm)"):
        hybrid: dict[str, list[float]] = {w: [] for w in ways}
        alone: dict[str, list[float]] = {w: [] for w in ways}
        same = 0
        for n, (q, user) in enumerate(zip(qs, users, strict=True)):
            scope = Scope(user_id=user, scope_id="default")
            order = list(ways) if n % 2 == 0 else list(reversed(ways))
            hits: dict[str, Any] = {}
            for way in order:
                keyword.rank = ways[way]  # memory_reads calls it through the module
                start = time.perf_counter()
                found = engine.store.memories.keyword_search(
                    scope, keyword_terms(q), SearchFilters(), 100
                )
                alone[way].append(time.perf_counter() - start)
                start = time.perf_counter()
                result = engine.search(q, user_id=user, limit=10)
                hybrid[way].append(time.perf_counter() - start)
                hits[way] = (found, [(h.memory.id, h.score) for h in result.hits])
            same += hits["cache"] == hits["sql"]
        keyword.rank = cached
        out[pass_name] = {
            "same_hits": same,
            **{f"hybrid {w}": percentiles_ms(v) for w, v in hybrid.items()},
            **{f"keyword {w}": percentiles_ms(v) for w, v in alone.items()},
        }
    engine.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("db")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--tenants", type=int, default=1)
    args = parser.parse_args()
    result = run(args.db, args.queries, args.tenants)
    print(f"machine: {result['machine']}")
    rows = []
    for pass_name in ("first pass (cache empty)", "second pass (warm)"):
        got = result[pass_name]
        for what in ("hybrid", "keyword"):
            new, old = got[f"{what} cache"], got[f"{what} sql"]
            rows.append(
                [
                    pass_name,
                    what,
                    f"{new['p50_ms']:.2f} / {new['p95_ms']:.2f}",
                    f"{old['p50_ms']:.2f} / {old['p95_ms']:.2f}",
                    f"{new['p50_ms'] / old['p50_ms']:.2f}x",
                    f"{got['same_hits']} of {result['queries']}",
                ]
            )
    print(
        table(
            ["pass", "timed", "cache p50 / p95 ms", "SQL p50 / p95 ms", "p50 ratio", "same"],
            rows,
        )
    )


if __name__ == "__main__":
    main()
