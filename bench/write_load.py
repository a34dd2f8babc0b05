"""Search latency while writes arrive (issue 35, point 1): idle, during and right after a bulk
ingest, and under a steady write load.

    python bench/write_load.py --items 10000                      # this checkout's code
    python bench/write_load.py --items 10000 --compare /old/tree  # old vs new, alternating
    python bench/write_load.py --items 2000 --profile             # what the other threads do

One fresh SQLite store per run (a temporary folder as the data dir, so nothing a previous run
saved is reused), the default embedder (the real model), one job worker thread and numpy's BLAS
threads (``OMOIDE_BLAS_THREADS``) as a server runs. Memories are LoCoMo turns
(``bench/scale.py``'s corpus), one tenant; searches are LoCoMo questions (hybrid, limit 10),
one after another from one client thread. Phases, in order:

* ``first``  searches right after the first bulk ingest of ``--items`` memories into the new
             store (``add_many``, batches of 100), for 60 s or ``--queries`` searches;
* ``idle``   the same once the store is quiet (no job pending, the process's threads idle,
             then ``--settle`` seconds);
* ``during`` searches while a thread ingests ``--items`` more memories the same way;
* ``after``  searches within the 60 s after that ingest ended (``--queries`` at most);
* ``idle_end`` the same as ``idle`` once the store is quiet again, at twice the memories;
* ``steady`` searches while a thread adds 20 memories per second, one ``add`` each.

Each phase prints p50/p95/p99 (ms) and its p95 over the idle p95; ``during``, ``after`` and
``steady`` also over ``idle_end``'s (the quiet store of the size they search). ``--compare
DIR`` runs the same in a subprocess with DIR's ``omoide`` first on the path, alternating new
and old ``--rounds`` times, and prints the ratios of both. ``--profile`` samples the stacks of the
process's threads every 10 ms during the phases after ``idle`` and prints where they were.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lib import common
from lib.common import machine_note

HERE = Path(__file__).resolve().parent
BATCH = 100
AFTER_S = 60.0
RATE = 20.0  # adds per second of the steady load
TENANT = {"user_id": "load", "scope_id": "bench"}


def percentiles(seconds: list[float]) -> dict[str, float]:
    values = sorted(s * 1000 for s in seconds)
    if not values:
        return {"n": 0}

    def pick(p: float) -> float:
        return round(values[min(len(values) - 1, round(p * (len(values) - 1)))], 2)

    return {"n": len(values), "p50": pick(0.5), "p95": pick(0.95), "p99": pick(0.99)}


class Sampler:
    """Counts, for the process's threads (the searching one as ``search``), the innermost
    omoide function they were in, every ``interval`` seconds while running."""

    def __init__(self, interval: float = 0.01) -> None:
        self.interval = interval
        self.counts: collections.Counter[str] = collections.Counter()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._me = 0

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        self._me = threading.get_ident()
        names = {}
        main = threading.main_thread().ident
        while not self._stop.wait(self.interval):
            names = {t.ident: t.name for t in threading.enumerate()}
            for ident, frame in sys._current_frames().items():
                if ident == self._me:
                    continue
                where = None
                f: Any = frame
                while f is not None:
                    file = f.f_code.co_filename
                    if "/omoide/" in file:
                        where = f"{file.split('/omoide/')[-1]}:{f.f_code.co_name}"
                        break
                    f = f.f_back
                who = "search" if ident == main else names.get(ident, "?")
                self.counts[f"{who} {where or frame.f_code.co_name}"] += 1


def _searches(memory: Any, questions: list[str], until: Any, limit_n: int) -> list[float]:
    out: list[float] = []
    i = 0
    while not until() and len(out) < limit_n:
        q = questions[i % len(questions)]
        i += 1
        start = time.perf_counter()
        memory.search(q, limit=10, **TENANT)
        out.append(time.perf_counter() - start)
    return out


def _ingest(memory: Any, texts: list[str]) -> float:
    from omoide import NewMemory

    start = time.perf_counter()
    for i in range(0, len(texts), BATCH):
        memory.add_many([NewMemory(text=t) for t in texts[i : i + BATCH]], **TENANT)
    return time.perf_counter() - start


def _quiet(memory: Any, settle: float) -> None:
    """Until no job is pending or running and this process's threads use under a tenth of a
    core for two seconds in a row (a background build finished), then ``settle`` seconds."""
    deadline = time.monotonic() + 900
    calm = 0
    while time.monotonic() < deadline and calm < 2:
        counts = memory.store.jobs.job_counts(None)
        before = time.process_time()
        time.sleep(1.0)
        busy = counts.get("pending", 0) or counts.get("running", 0)
        calm = 0 if busy or time.process_time() - before > 0.1 else calm + 1
    time.sleep(settle)


def _timed_phase(
    memory: Any, questions: list[str], n: int, seconds: float, profile: bool
) -> tuple[list[float], list[str]]:
    end = time.monotonic() + seconds
    sampler = Sampler() if profile else None
    if sampler:
        sampler.__enter__()
    got = _searches(memory, questions, lambda: time.monotonic() > end, n)
    top: list[str] = []
    if sampler:
        sampler.__exit__()
        top = [f"{c:5d} {k}" for k, c in sampler.counts.most_common(20)]
    return got, top


def child(args: argparse.Namespace) -> dict[str, Any]:
    from lib.corpus import corpus_texts, questions

    from omoide import Memory
    from omoide.config import Settings
    from omoide.serve.process import limit_blas_threads

    limit_blas_threads(Settings().server.blas_threads)  # as the server sets it
    texts = corpus_texts(2 * args.items)
    qs = questions(args.queries)
    out: dict[str, Any] = {"machine": machine_note(), "items": args.items}
    profiles: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp) / "data")
        memory = Memory(Path(tmp) / "load.db", settings=settings, workers=1)
        memory.search("warm up the model", **TENANT)
        out["ingest_s"] = round(_ingest(memory, texts[: args.items]), 1)
        first, profiles["first"] = _timed_phase(memory, qs, args.queries, AFTER_S, args.profile)
        _quiet(memory, args.settle)
        idle, _ = _timed_phase(memory, qs, args.queries, 600, False)
        writer = threading.Thread(target=_ingest, args=(memory, texts[args.items :]))
        sampler = Sampler() if args.profile else None
        if sampler:
            sampler.__enter__()
        started = time.perf_counter()
        writer.start()
        during = _searches(memory, qs, lambda: not writer.is_alive(), 10**9)
        writer.join()
        out["during_ingest_s"] = round(time.perf_counter() - started, 1)  # beside the searches
        if sampler:
            sampler.__exit__()
            profiles["during"] = [f"{c:5d} {k}" for k, c in sampler.counts.most_common(20)]
        after, profiles["after"] = _timed_phase(memory, qs, args.queries, AFTER_S, args.profile)
        _quiet(memory, args.settle)
        idle_end, _ = _timed_phase(memory, qs, args.queries, 600, False)
        stop = threading.Event()
        added: list[int] = []
        steady_writer = threading.Thread(target=_steady, args=(memory, stop, added), daemon=True)
        started = time.perf_counter()
        steady_writer.start()
        steady, profiles["steady"] = _timed_phase(memory, qs, args.queries, 600, args.profile)
        stop.set()
        steady_writer.join()
        out["steady_adds_per_s"] = round(len(added) / (time.perf_counter() - started), 1)
        memory.close()
    phases = {"first": first, "idle": idle, "during": during, "after": after}
    phases |= {"idle_end": idle_end, "steady": steady}
    out["phases"] = {k: percentiles(v) for k, v in phases.items()}
    base = out["phases"]["idle"]["p95"]
    out["p95_over_idle"] = {k: round(v["p95"] / base, 2) for k, v in out["phases"].items()}
    # ``after`` and ``steady`` search twice the memories ``idle`` did, and a search's cost
    # grows with its tenant: their ratio to the quiet store of their own size says what the
    # writes cost them
    end = out["phases"]["idle_end"]["p95"]
    out["p95_over_idle_end"] = {
        k: round(out["phases"][k]["p95"] / end, 2) for k in ("during", "after", "steady")
    }
    out["profiles"] = profiles
    return out


def _steady(memory: Any, stop: threading.Event, added: list[int]) -> None:
    from lib.corpus import corpus_texts

    texts = corpus_texts(5000)
    i = 0
    next_at = time.monotonic()
    while not stop.is_set():
        memory.add(texts[i % len(texts)], **TENANT)
        added.append(i)
        i += 1
        next_at += 1 / RATE
        stop.wait(max(0.0, next_at - time.monotonic()))


def _run(code: Path, args: argparse.Namespace) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--child", "--items", str(args.items)]
    cmd += ["--queries", str(args.queries), "--settle", str(args.settle)]
    cmd += ["--profile"] if args.profile else []
    # the corpus module reads the LoCoMo folder from BENCH_LOCOMO when it is imported
    env = {**os.environ, "PYTHONPATH": str(code), "BENCH_LOCOMO": str(args.data)}
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{code}: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--settle", type=float, default=30.0)
    parser.add_argument("--data", type=Path, default=common.DEFAULT_DATA)
    parser.add_argument("--compare", type=Path, help="a checkout (or folder) with older omoide")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args)), flush=True)
        return
    codes = {"new": HERE.parent}
    if args.compare:
        codes["old"] = args.compare
    results: dict[str, list[dict[str, Any]]] = {name: [] for name in codes}
    for r in range(args.rounds):
        for name in list(codes) if r % 2 == 0 else list(reversed(codes)):
            got = _run(codes[name], args)
            results[name].append(got)
            keys = ("ingest_s", "during_ingest_s", "steady_adds_per_s", "phases")
            keys += ("p95_over_idle", "p95_over_idle_end")
            print(name, json.dumps({k: got.get(k) for k in keys}))
            for phase, lines in got["profiles"].items():
                print(f"  {name} {phase} profile:\n    " + "\n    ".join(lines))
    ratios = ("p95_over_idle", "p95_over_idle_end")
    print(json.dumps({n: [{r: g[r] for r in ratios} for g in v] for n, v in results.items()}))


if __name__ == "__main__":
    main()
