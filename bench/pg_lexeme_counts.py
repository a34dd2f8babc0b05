"""PostgreSQL keyword search and ingest with and without migration 0007 (document frequencies
kept as delta rows in ``lexeme_counts`` instead of counted over the postings).

Two schemas of one server, both migrated; in one the triggers of 0007 are dropped again (the
writes before 0007). ``--items`` memories of ``bench/scale.py``'s corpus (``<speaker>: <1-3
LoCoMo dev sentences>``), each with its neighbours' texts as context (as a session's turns
get them), go into one tenant of each through the store port, batches of 1,000 alternating
between the two schemas (so both ingest under the same machine load). Then ``VACUUM
ANALYZE`` and, for each LoCoMo question, on the schema with 0007: the keyword statement
(``fts._SEARCH``) and the same with its frequencies counted over ``memory_terms`` as before
0007, alternated question by question, limit 120 (hybrid's keyword fetch); their results
must be identical.

    python bench/pg_lexeme_counts.py --items 100000 --queries 200
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from scale import corpus_texts, questions
from scale_pg import schema_url, start_server

from omoide.retrieval.terms import keyword_terms
from omoide.store import open_store
from omoide.store.ports.memories import NewMemory
from omoide.store.postgres import fts
from omoide.store.postgres.filters import memory_filter
from omoide.store.protocol import Store
from omoide.types import Scope, SearchFilters

SCOPE = Scope(user_id="u", scope_id="s")
BATCH = 1000
_KEPT = """(SELECT coalesce(sum(l.df), 0)::bigint FROM lexeme_counts l
        WHERE l.user_id = %s AND l.scope_id = %s AND l.lexeme = q.lexeme)"""
_COUNTED = """(SELECT count(*) FROM memory_terms t
        WHERE t.user_id = %s AND t.scope_id = %s AND t.lexeme = q.lexeme)"""
assert _KEPT in fts._SEARCH
BEFORE_0007 = fts._SEARCH.replace(_KEPT, _COUNTED)


def load(stores: dict[str, Store], items: int) -> dict[str, float]:
    """Insert the corpus into every store, batch by batch in turn; seconds spent per store."""
    texts = corpus_texts(items)
    spent = dict.fromkeys(stores, 0.0)
    for i in range(0, items, BATCH):
        news = [
            NewMemory(
                texts[j], context="\n".join(texts[k] for k in (j - 1, j + 1) if 0 <= k < items)
            )
            for j in range(i, min(i + BATCH, items))
        ]
        names = list(stores) if (i // BATCH) % 2 else list(reversed(stores))
        for name in names:
            start = time.perf_counter()
            with stores[name].transaction() as tx:
                tx.memories.insert_memories(SCOPE, news, "b")
            spent[name] += time.perf_counter() - start
        if (i + BATCH) % 20_000 == 0:
            print(f"  {i + BATCH:,}", flush=True)
    return spent


def loaded_pair(
    names: tuple[str, str], undo: Callable[[str], None], items: int
) -> tuple[str, Any, dict[str, str], dict[str, float]]:
    """A throwaway server with two schemas ``names``, both migrated to the latest version,
    ``undo`` applied to the second's URL, and ``items`` memories loaded into both (``load``):
    the server's URL, the server, the schemas' URLs and the seconds each took to load."""
    base, server = start_server()
    urls = {name: schema_url(base, name) for name in names}
    stores = {name: open_store(url) for name, url in urls.items()}  # migrated to the latest
    undo(urls[names[1]])
    spent = load(stores, items)
    for store in stores.values():
        store.close()
    return base, server, urls, spent


def drop_0007(url: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        for event in ("insert", "update", "delete", "truncate"):
            conn.execute(f"DROP TRIGGER lexeme_counts_{event} ON memory_terms")


def arguments(doc: str | None) -> argparse.Namespace:
    """The options of this benchmark and of pg_postings_key.py."""
    parser = argparse.ArgumentParser(description=(doc or "").split("\n\n")[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--limit", type=int, default=120, help="hybrid's keyword fetch")
    return parser.parse_args()


def main() -> None:
    import psycopg
    import psycopg.rows

    args = arguments(__doc__)
    _, server, urls, spent = loaded_pair(("with_0007", "without_0007"), drop_0007, args.items)
    for url in urls.values():
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("VACUUM ANALYZE")
    where = memory_filter(SCOPE, SearchFilters())
    statements = {
        "before": BEFORE_0007.replace("{where}", where[0]),
        "now": fts._SEARCH.replace("{where}", where[0]),
    }
    tenant = [SCOPE.user_id, SCOPE.scope_id]
    timings: dict[str, list[float]] = {"before": [], "now": []}
    differ = 0
    with psycopg.connect(
        urls["with_0007"], autocommit=True, row_factory=psycopg.rows.dict_row
    ) as conn:
        for n, question in enumerate(questions(args.queries)):
            text = " ".join(keyword_terms(question))
            params = [*tenant, text, *tenant, *tenant, *tenant, SCOPE.user_id, *where[1]]
            got = {}
            for turn in ("now", "before") if n % 2 else ("before", "now"):
                start = time.perf_counter()
                rows = conn.execute(statements[turn], [*params, args.limit]).fetchall()
                timings[turn].append((time.perf_counter() - start) * 1000)
                got[turn] = [(r["id"], r["score"]) for r in rows if r["id"] is not None]
            differ += got["now"] != got["before"]
        row = conn.execute(
            "SELECT (SELECT count(*) FROM lexeme_counts) AS deltas,"
            " pg_relation_size('lexeme_counts_pkey') AS size,"
            " (SELECT count(*) FROM memory_terms) AS n"
        ).fetchone()
    server.cleanup()
    print(f"{args.items:,} memories in one tenant, {row['n']:,} postings")
    print(f"lexeme_counts: {row['deltas']:,} rows, key {row['size'] / 1e6:.1f} MB")
    report(
        {
            "without 0007": args.items / spent["without_0007"],
            "with": args.items / spent["with_0007"],
        },
        {"before": timings["before"], "now": timings["now"]},
    )
    print(f"questions whose results differ: {differ} of {args.queries}")


def report(rates: dict[str, float], timings: dict[str, list[float]]) -> None:
    """Ingest rates and keyword p50 / p95, each pair given (before, after), with the ratio."""
    (r0, before), (r1, after) = rates.items()
    print(f"ingest items/s: {r0} {before:.0f}, {r1} {after:.0f} ({after / before:.2f}x)")
    (t0, old), (t1, new) = timings.items()
    b, a = statistics.median(old), statistics.median(new)
    print(f"keyword p50 ms: {t0} {b:.2f}, {t1} {a:.2f} ({a / b:.2f}x)")
    b95, a95 = statistics.quantiles(old, n=20)[-1], statistics.quantiles(new, n=20)[-1]
    print(f"keyword p95 ms: {t0} {b95:.2f}, {t1} {a95:.2f}")


if __name__ == "__main__":
    main()
