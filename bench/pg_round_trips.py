"""Round trips per search on PostgreSQL: statements, transactions and pool checks, and p50.

Builds ``--tenants`` tenants of ``--per-tenant`` memories (LoCoMo dev sentences, as
``bench/scale.py``) on a throwaway pgserver, then runs LoCoMo questions through
``Memory.search`` with each recipe (``hybrid``, ``vector``, ``keyword``; the order rotates),
on a random tenant each. ``--embedder hash`` (default) costs no model time, so the figures
are the store's; ``--embedder local`` is the real all-MiniLM-L6-v2 (its query embedding is
in the p50, and ``hybrid`` then also runs the query expansion: a second keyword search and
a text read, which the hash embedder skips as uncalibrated).

Counting is client-side, by wrapping psycopg in this process (no server extension needed):
``Cursor.execute`` (every ``conn.execute``; the pool's liveness check is its empty query
``""``, counted apart) and ``Transaction`` enter/exit (``BEGIN`` and ``COMMIT``/``ROLLBACK``).
Without pipeline mode each of these is one client-server round trip. ``--dump`` writes every
hit (memory by its corpus index, score, per-signal detail) to compare two runs' results.

    python bench/pg_round_trips.py --tenants 3 --queries 60
    python bench/pg_round_trips.py --tenants 3 --queries 60 --embedder local --dump /tmp/a.json
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import threading
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

RECIPES = ("hybrid", "vector", "keyword")


class Tally:
    """Statements seen by every connection of this process, by kind, since ``reset``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.kinds: Counter[str] = Counter()
        self.texts: Counter[str] = Counter()

    def add(self, kind: str, text: str = "") -> None:
        with self._lock:
            self.kinds[kind] += 1
            if text:
                self.texts[" ".join(text.split())[:70]] += 1

    def reset(self) -> tuple[Counter[str], Counter[str]]:
        with self._lock:
            got = (self.kinds, self.texts)
            self.kinds, self.texts = Counter(), Counter()
            return got


def instrument(tally: Tally) -> None:
    """Count statements and transactions (see the module docstring)."""
    execute = psycopg.Cursor.execute
    enter, leave = psycopg.Transaction.__enter__, psycopg.Transaction.__exit__

    def counted_execute(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        text = query if isinstance(query, str) else str(getattr(query, "_obj", query))
        if text == "":
            tally.add("pool check")
        else:
            tally.add("statement", text)
        return execute(self, query, *args, **kwargs)

    def counted_enter(self: Any) -> Any:
        tally.add("BEGIN")
        return enter(self)

    def counted_leave(self: Any, *exc: Any) -> Any:
        tally.add("COMMIT/ROLLBACK")
        return leave(self, *exc)

    psycopg.Cursor.execute = counted_execute  # type: ignore[method-assign]
    psycopg.Transaction.__enter__ = counted_enter  # type: ignore[method-assign]
    psycopg.Transaction.__exit__ = counted_leave  # type: ignore[method-assign]


def ingest(memory: Any, tenants: int, per_tenant: int) -> None:
    import scale

    from omoide.store.protocol import NewMemory

    pool = scale.sentences()
    rows = scale.corpus(tenants * per_tenant, tenants, len(pool))
    for start in range(0, len(rows), 500):
        chunk = rows[start : start + 500]
        by_tenant: dict[int, list[Any]] = {}
        for k, (tenant, session, speaker, ids) in enumerate(chunk, start):
            text = f"{speaker}: {' '.join(pool[i] for i in ids)}"
            new = NewMemory(text=text, session_id=f"s{session}", metadata={"k": k})
            by_tenant.setdefault(tenant, []).append(new)
        for tenant, batch in by_tenant.items():
            memory.add_many(batch, user_id=f"user{tenant}")


def run(memory: Any, tally: Tally, args: argparse.Namespace) -> dict[str, Any]:
    import scale

    rng = random.Random(7)
    qs = scale.questions(args.queries)
    times: dict[str, list[float]] = {r: [] for r in RECIPES}
    kinds: dict[str, Counter[str]] = {r: Counter() for r in RECIPES}
    texts: dict[str, Counter[str]] = {r: Counter() for r in RECIPES}
    hits: list[Any] = []
    for n, q in enumerate(qs):
        user = f"user{rng.randrange(args.tenants)}"
        order = RECIPES[n % 3 :] + RECIPES[: n % 3]
        for recipe in order:
            tally.reset()
            start = time.perf_counter()
            found = memory.search(q, user_id=user, limit=10, recipe=recipe)
            times[recipe].append((time.perf_counter() - start) * 1000)
            got, said = tally.reset()
            kinds[recipe].update(got)
            texts[recipe].update(said)
            hits.append(
                [n, recipe, [(h.memory.metadata["k"], h.score, h.signals) for h in found.hits]]
            )
    out: dict[str, Any] = {}
    for recipe in RECIPES:
        per = {k: v / len(qs) for k, v in sorted(kinds[recipe].items())}
        out[recipe] = {
            "p50_ms": statistics.median(times[recipe]),
            "round_trips_per_search": sum(per.values()),
            "per_search": per,
            "statements": {t: c / len(qs) for t, c in texts[recipe].most_common()},
        }
    if args.dump:
        Path(args.dump).write_text(json.dumps(hits, default=str))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tenants", type=int, default=3)
    parser.add_argument("--per-tenant", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--embedder", choices=("hash", "local"), default="hash")
    parser.add_argument("--dump", help="write every hit as JSON here")
    parser.add_argument("--statements", action="store_true", help="print each statement")
    args = parser.parse_args()

    from scale_pg import schema_url, start_server

    from omoide.config import Settings
    from omoide.embed import HashEmbedder, build_embedder
    from omoide.memory import Memory

    base, server = start_server()
    embedder = HashEmbedder() if args.embedder == "hash" else build_embedder(Settings())
    embedder.embed(["warm up"])
    memory = Memory(schema_url(base, f"rt_{uuid.uuid4().hex[:10]}"), embedder=embedder, workers=0)
    try:
        ingest(memory, args.tenants, args.per_tenant)
        memory.run_jobs(100_000)
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute("ANALYZE")
        tally = Tally()
        instrument(tally)
        result = run(memory, tally, args)
    finally:
        memory.close()
        del server
    for recipe, r in result.items():
        print(
            f"{recipe:8} p50 {r['p50_ms']:6.2f} ms  round trips/search"
            f" {r['round_trips_per_search']:5.2f}  {r['per_search']}"
        )
        if args.statements:
            for text, count in r["statements"].items():
                print(f"    {count:5.2f}  {text}")


if __name__ == "__main__":
    main()
