"""Keyword search latency: the per-tenant index against FTS5's bm25 on the same data, same run.

    python bench/keyword_speed.py                 # 100k memories in one tenant
    python bench/keyword_speed.py --memories 20000 --tenants 10

The store (built with ``Memory.add_many``, bench/scale.py's corpus, neighbour context by the
engine, model-free vectors) keeps FTS5's table next to the per-tenant index, so the previous
keyword path (FTS5 ``MATCH`` with the tenant token and ``bm25()``, whole-file common-term
pruning; omoide before migration 0006) runs on the very same rows. The two alternate question
by question, so machine load hits them alike. Output: p50/p95 of each and their ratio.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import RESULTS_DIR, percentiles_ms
from scale import corpus, questions, sentences

from omoide.embed import HashEmbedder
from omoide.memory import Memory
from omoide.retrieval.terms import keyword_terms
from omoide.store.protocol import NewMemory
from omoide.store.sqlite import fts, rows
from omoide.store.sqlite.store import SQLiteStore
from omoide.types import Scope, SearchFilters

FILTERS = SearchFilters()


def build(path: Path, memories: int, tenants: int) -> float:
    """Ingest the corpus; return items/s (engine + store, no model)."""
    pool = sentences()
    names = corpus(memories, tenants, len(pool))
    engine = Memory(path, embedder=HashEmbedder(), workers=0)
    start = time.perf_counter()
    for offset in range(0, len(names), 500):
        chunk = names[offset : offset + 500]
        by_tenant: dict[int, list[NewMemory]] = {}
        for tenant, session, speaker, ids in chunk:
            text = f"{speaker}: " + " ".join(pool[i] for i in ids)
            by_tenant.setdefault(tenant, []).append(NewMemory(text=text, session_id=f"s{session}"))
        for tenant, batch in by_tenant.items():
            engine.add_many(batch, user_id=f"user{tenant}")
    rate = len(names) / (time.perf_counter() - start)
    engine.close()
    return rate


def fts5_search(
    conn: sqlite3.Connection, prune: fts.TermFilter, scope: Scope, terms: list[str]
) -> int:
    """The keyword SQL omoide ran before the per-tenant index (whole-file statistics)."""
    match = fts.match_expression(prune.selective(conn, terms), rows.tenant_token(scope))
    found = conn.execute(
        "SELECT m.id, bm25(memories_fts, 1.0, 0.4, 0.0) AS rank FROM memories_fts"
        " JOIN memories m ON m.seq = memories_fts.rowid WHERE memories_fts MATCH ?"
        " AND m.user_id = ? AND m.scope_id = ? AND m.invalid_at IS NULL ORDER BY rank LIMIT 100",
        (match, scope.user_id, scope.scope_id),
    ).fetchall()
    return len(found)


def measure(path: Path, n_queries: int, tenants: int) -> dict[str, Any]:
    store = SQLiteStore(path)
    conn = sqlite3.connect(path)
    prune = fts.TermFilter()
    times: dict[str, list[float]] = {"per_tenant": [], "fts5": []}
    for i, question in enumerate(questions(n_queries + 5)):
        scope = Scope(user_id=f"user{i % tenants}", scope_id="default")
        terms = keyword_terms(question)
        runs = [
            (
                "per_tenant",
                lambda s=scope, t=terms: store.memories.keyword_search(s, t, FILTERS, 100),
            ),
            ("fts5", lambda s=scope, t=terms: fts5_search(conn, prune, s, t)),
        ]
        for name, run in runs if i % 2 else runs[::-1]:
            start = time.perf_counter()
            run()
            if i >= 5:  # the first few warm caches
                times[name].append(time.perf_counter() - start)
    conn.close()
    store.close()
    out = {name: percentiles_ms(values) for name, values in times.items()}
    out["ratio_p50"] = out["per_tenant"]["p50_ms"] / out["fts5"]["p50_ms"]
    out["ratio_mean"] = statistics.fmean(times["per_tenant"]) / statistics.fmean(times["fts5"])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--tenants", type=int, default=1)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--db", type=Path, help="reuse or keep this database")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "keyword_speed.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.db or Path(tmp) / "kw.db"
        rate = None if path.exists() else build(path, args.memories, args.tenants)
        result = {"memories": args.memories, "tenants": args.tenants, "ingest_items_per_s": rate}
        result |= measure(path, args.queries, args.tenants)
    print(json.dumps(result, indent=2))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    sys.exit(main())
