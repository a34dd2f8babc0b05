"""Search latency with numpy's BLAS on one thread (``OMOIDE_BLAS_THREADS=1``, what the processes
omoide starts set) against numpy's default (one thread per core), in one process.

    python bench/blas_threads.py --items 10000
    python bench/blas_threads.py --items 40000 --rounds 10

One fresh SQLite store of ``--items`` memories in one tenant (``bench/scale.py``'s corpus of
LoCoMo sentences, the default embedder: the real model), one job worker thread, as a server
runs; then LoCoMo questions (hybrid, limit 10) from one client thread, in blocks of ``--block``
searches, the two settings alternating block by block (which goes first alternates too), so
both see the same machine load: while the store is idle (``--settle`` seconds after the
ingest), then while a thread ingests more memories (``add_many``, batches of 100). Prints
p50/p95 (ms) per phase and setting, and the one-thread figures over the default's.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lib.common import machine_note
from threadpoolctl import threadpool_limits

TENANT = {"user_id": "load", "scope_id": "bench"}
SETTINGS = {"one thread": 1, "default": None}


def _ms(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 2)


def _phase(memory: Any, questions: list[str], rounds: int, block: int) -> dict[str, Any]:
    times: dict[str, list[float]] = {name: [] for name in SETTINGS}
    asked = 0
    for r in range(rounds):
        order = list(SETTINGS) if r % 2 == 0 else list(reversed(SETTINGS))
        for name in order:
            with threadpool_limits(limits=SETTINGS[name], user_api="blas"):
                for _ in range(block):
                    start = time.perf_counter()
                    memory.search(questions[asked % len(questions)], limit=10, **TENANT)
                    times[name].append(time.perf_counter() - start)
                    asked += 1
    out: dict[str, Any] = {n: {"p50": _ms(t, 0.5), "p95": _ms(t, 0.95)} for n, t in times.items()}
    one, default = out["one thread"], out["default"]
    out["one_over_default"] = {k: round(one[k] / default[k], 2) for k in ("p50", "p95")}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--block", type=int, default=25)
    parser.add_argument("--settle", type=float, default=20.0, help="seconds after the ingest")
    args = parser.parse_args()

    from lib.corpus import corpus_texts, questions

    from omoide import Memory, NewMemory
    from omoide.config import Settings

    texts = corpus_texts(args.items + 40_000)
    asked = questions(200)
    out: dict[str, Any] = {"machine": machine_note(), "items": args.items}
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp) / "data")
        memory = Memory(Path(tmp) / "blas.db", settings=settings, workers=1)
        memory.search("warm up the model", **TENANT)
        for i in range(0, args.items, 100):
            memory.add_many([NewMemory(text=t) for t in texts[i : i + 100]], **TENANT)
        time.sleep(args.settle)  # the writes' follow-up work (posting lists, jobs) done
        out["idle"] = _phase(memory, asked, args.rounds, args.block)
        stop = threading.Event()

        def ingest() -> None:
            i = args.items
            while not stop.is_set() and i + 100 <= len(texts):
                memory.add_many([NewMemory(text=t) for t in texts[i : i + 100]], **TENANT)
                i += 100

        writer = threading.Thread(target=ingest)
        writer.start()
        out["writing"] = _phase(memory, asked, args.rounds, args.block)
        stop.set()
        writer.join()
        memory.close()
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
