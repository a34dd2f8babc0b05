"""SQLite keyword search at N memories of one tenant: the pruning rule before (rank the rarest
terms within 15% of the tenant, nothing rescored) vs now (5,000 postings, the best 300
rescored), on the same store, alternated per question; 200 LoCoMo questions, limit 120
(hybrid's keyword fetch), the second of two passes timed. The store (scale.py's corpus, no
vectors, inserted through the port) is kept at PATH for later runs.

    python bench/keyword_pruning_scale.py 1000000 /tmp/kw1m.db
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scale import corpus_texts, questions

from omoide.retrieval.terms import keyword_terms
from omoide.store import open_store, pruning
from omoide.store.ports.memories import NewMemory
from omoide.store.protocol import Store
from omoide.types import Scope, SearchFilters

SCOPE = Scope(user_id="u", scope_id="s")


def load(store: Store, items: int) -> None:
    texts = corpus_texts(items)
    start = time.perf_counter()
    for i in range(0, items, 2000):
        with store.transaction() as tx:
            tx.memories.insert_memories(SCOPE, [NewMemory(t) for t in texts[i : i + 2000]], "b")
        if (i + 2000) % 100_000 == 0:
            print(
                f"  {i + 2000:,} ({(i + 2000) / (time.perf_counter() - start):.0f}/s)", flush=True
            )


def main() -> None:
    items, path = int(sys.argv[1]), Path(sys.argv[2])
    fresh = not path.exists()
    store = open_store(path)
    if fresh:
        load(store, items)
    rules = {"before": (int(0.15 * items), 0), "now": (5000, 300)}
    times: dict[str, list[float]] = {k: [] for k in rules}
    for timed in (False, True):
        for n, question in enumerate(questions(200)):
            terms = keyword_terms(question)
            for name in list(rules) if n % 2 else list(rules)[::-1]:
                pruning.POSTINGS_MAX, pruning.RESCORE_DEPTH = rules[name]
                start = time.perf_counter()
                store.memories.keyword_search(SCOPE, terms, SearchFilters(), 120)
                if timed:
                    times[name].append((time.perf_counter() - start) * 1000)
    store.close()
    for name, values in times.items():
        p95 = statistics.quantiles(values, n=20)[-1]
        print(f"{name}: keyword p50 {statistics.median(values):.1f} ms, p95 {p95:.1f} ms")


if __name__ == "__main__":
    main()
