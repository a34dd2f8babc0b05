"""all-MiniLM-L6-v2 through torch (``LocalEmbedder``) vs onnxruntime (``OnnxEmbedder``).

    python bench/embed_bench.py                  # 3 rounds, 2,000 sentences, 200 queries (~10 min)
    python bench/embed_bench.py --quick          # 1 round, 500 sentences, 50 queries
    python bench/embed_bench.py --json out.json  # also write every figure as JSON

What is measured, each runtime at 1 and 2 threads (``threads=`` of the embedder):

* single-query latency p50/p95: the LoCoMo dev questions, one ``embed([q])`` at a time, on an
  idle machine and again while another process keeps one core busy (a pure-Python loop: the
  keyword search or another request beside the query);
* batch throughput: the corpus embedded in calls of 32 and of 256 texts, each embedder with
  omoide's default ``batch_size=64`` (so a call of 256 is sorted by length and run as 4 batches
  of 64 by torch, and as runs of at most 64 texts and 512 padded tokens by onnx);
* cold start, each in a fresh process: import + construct + first ``embed`` (the ONNX file
  already exported), RSS after it and peak RSS;
* export: a fresh process with an empty cache directory, up to the first vector.

Corpus: the 788 LoCoMo dev turns (``speaker: text``), the same turns with their session date,
and each turn joined to the one before it, shuffled (seed 0), cut at ``--sentences``.

The machine is shared and noisy, so every runtime/thread configuration lives in its own
long-lived worker process, only one worker runs at a time, the order rotates each round, and the
report gives per-round onnx/torch ratios (median over rounds) next to the absolute medians.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lib.common import DEFAULT_DATA, REPO_DIR, load_locomo, machine_note, percentiles_ms, table

# "onnx-uncapped" is onnx without the 512-token cap per run, to tell the runtime's gain from
# the batching's.
CONFIGS = [("torch", 1), ("onnx", 1), ("torch", 2), ("onnx", 2), ("onnx-uncapped", 1)]
BATCHES = (32, 256)


# the data -----------------------------------------------------------------------------------
def corpus(n: int, data: Path) -> list[str]:
    try:
        conversations = load_locomo(data)
    except SystemExit:
        conversations = []
    texts: list[str] = []
    for conv in conversations:
        turns = conv.turns
        texts += [t.text for t in turns]
        texts += [f"[{t.session_date}] {t.text}" for t in turns]
        texts += [f"{a.text}\n{b.text}" for a, b in itertools.pairwise(turns)]
    if not texts:  # no dataset: varied generated sentences
        rng = random.Random(0)
        words = "I we she went to the park museum lake with my dog kids and painted a sunset"
        texts = [" ".join(rng.choices(words.split(), k=rng.randint(3, 60))) for _ in range(n)]
    random.Random(0).shuffle(texts)
    return (texts * (n // len(texts) + 1))[:n]


def queries(n: int, data: Path) -> list[str]:
    try:
        qs = [q.question for conv in load_locomo(data) for q in conv.questions]
    except SystemExit:
        qs = []
    qs = qs or [f"When did Caroline go to the support group number {i}?" for i in range(n)]
    return (qs * (n // len(qs) + 1))[:n]


def make_embedder(runtime: str, threads: int, cache: str) -> Any:
    if runtime == "torch":
        from omoide.embed.local import LocalEmbedder

        return LocalEmbedder(threads=threads)
    from omoide.embed.onnx import OnnxEmbedder

    embedder = OnnxEmbedder(threads=threads, cache_dir=Path(cache))
    if runtime == "onnx-uncapped":
        embedder.max_tokens = 1 << 30
    return embedder


def rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


# child processes ----------------------------------------------------------------------------
def child_cold(runtime: str, cache: str) -> None:
    """One cold start: import, construct, first embed."""
    start = time.perf_counter()
    embedder = make_embedder(runtime, 1, cache)
    embedder.embed(["warm up"])
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": seconds, "rss_mb": rss_mb(), "peak_rss_mb": peak}))


def child_worker(runtime: str, threads: int, cache: str, n_sentences: int, n_queries: int) -> None:
    """Serves commands from stdin (one JSON line each), answers one JSON line each."""
    texts, qs = corpus(n_sentences, DEFAULT_DATA), queries(n_queries, DEFAULT_DATA)
    embedder = make_embedder(runtime, threads, cache)
    embedder.embed(texts[:64])  # load and warm up
    for q in qs[:10]:
        embedder.embed([q])
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        command = json.loads(line)
        if command["op"] == "queries":
            latencies = []
            for q in qs:
                start = time.perf_counter()
                embedder.embed([q])
                latencies.append(time.perf_counter() - start)
            answer: dict[str, Any] = percentiles_ms(latencies)
        elif command["op"] == "batch":
            size = command["size"]
            start = time.perf_counter()
            for i in range(0, len(texts), size):
                embedder.embed(texts[i : i + size])
            answer = {"per_s": len(texts) / (time.perf_counter() - start)}
        else:
            answer = {"rss_mb": rss_mb()}
        print(json.dumps(answer), flush=True)


# the parent -----------------------------------------------------------------------------------
def run_child(*args: str) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, __file__, *args], capture_output=True, text=True, check=True
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


class Worker:
    def __init__(self, runtime: str, threads: int, cache: str, args: argparse.Namespace) -> None:
        self.key = f"{runtime}-{threads}"
        sizes = ["--sentences", str(args.sentences), "--queries", str(args.queries)]
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--worker", runtime, str(threads), "--cache", cache, *sizes],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.ask_raw()  # ready

    def ask_raw(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"worker {self.key} died")
        return json.loads(line)

    def ask(self, **command: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(command) + "\n")
        self.proc.stdin.flush()
        return self.ask_raw()

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(30)


def measure_export(cache_root: Path, runs: int) -> list[float]:
    times = []
    for i in range(runs):
        fresh = cache_root / f"export-{i}"
        times.append(run_child("--cold", "onnx", "--cache", str(fresh))["seconds"])
    return times


def measure_cold(cache: str, rounds: int) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {"torch": [], "onnx": []}
    for r in range(rounds):
        for runtime in ("torch", "onnx") if r % 2 == 0 else ("onnx", "torch"):
            out[runtime].append(run_child("--cold", runtime, "--cache", cache))
    return out


def measure_warm(cache: str, args: argparse.Namespace) -> dict[str, list[dict[str, Any]]]:
    workers = [Worker(runtime, threads, cache, args) for runtime, threads in CONFIGS]
    rounds: dict[str, list[dict[str, Any]]] = {w.key: [] for w in workers}
    try:
        for r in range(args.rounds):
            order = workers[r % len(workers) :] + workers[: r % len(workers)]
            row: dict[str, dict[str, Any]] = {w.key: {} for w in workers}
            for w in order:
                row[w.key].update(w.ask(op="queries"))
            burner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
            try:
                for w in order:
                    busy = w.ask(op="queries")
                    row[w.key] |= {"busy_p50_ms": busy["p50_ms"], "busy_p95_ms": busy["p95_ms"]}
            finally:
                burner.kill()
                burner.wait()
            for size in BATCHES:
                for w in order:
                    row[w.key][f"batch{size}_per_s"] = w.ask(op="batch", size=size)["per_s"]
            for w in order:
                row[w.key].update(w.ask(op="rss"))
                rounds[w.key].append(row[w.key])
            print(f"round {r + 1}/{args.rounds}: {json.dumps(row)}", file=sys.stderr)
    finally:
        for w in workers:
            w.close()
    return rounds


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def ratio_cell(t: list[dict[str, Any]], o: list[dict[str, Any]], key: str) -> str:
    ratios = [b[key] / a[key] for a, b in zip(t, o, strict=True)]
    return f"{median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})"


def report(warm: dict[str, list[dict[str, Any]]], cold: dict[str, Any], export: list[float]) -> str:
    metrics = [("p50_ms", "query p50 ms"), ("p95_ms", "query p95 ms")]
    metrics += [("busy_p50_ms", "query p50 ms, one core busy")]
    metrics += [("busy_p95_ms", "query p95 ms, one core busy")]
    metrics += [(f"batch{b}_per_s", f"calls of {b}, sentences/s") for b in BATCHES]
    metrics += [("rss_mb", "RSS after the runs MB")]
    rows = []
    for threads in (1, 2):
        t, o = warm[f"torch-{threads}"], warm[f"onnx-{threads}"]
        for key, label in metrics:
            plural = "s" if threads > 1 else ""
            rows.append(
                [
                    f"{label}, {threads} thread{plural}",
                    median([x[key] for x in t]),
                    median([x[key] for x in o]),
                    ratio_cell(t, o, key),
                ]
            )
    t, u = warm["torch-1"], warm["onnx-uncapped-1"]
    for key, label in metrics[4:]:
        rows.append(
            [
                f"{label}, 1 thread, onnx **without** the 512-token cap",
                median([x[key] for x in t]),
                median([x[key] for x in u]),
                ratio_cell(t, u, key),
            ]
        )
    for key, label in [("seconds", "cold start s"), ("rss_mb", "RSS after first embed MB")]:
        t, o = cold["torch"], cold["onnx"]
        rows.append(
            [label, median([x[key] for x in t]), median([x[key] for x in o]), ratio_cell(t, o, key)]
        )
    peak = [median([x["peak_rss_mb"] for x in cold[k]]) for k in ("torch", "onnx")]
    rows.append(["peak RSS of the cold start MB", *peak, f"{peak[1] / peak[0]:.2f}"])
    rows.append(["one-off export (fresh cache, to first vector) s", "-", median(export), "-"])
    return table(["measure", "torch", "onnx", "onnx / torch (median, range)"], rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sentences", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--cold-runs", type=int, default=3)
    parser.add_argument("--export-runs", type=int, default=2)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--cache", help=argparse.SUPPRESS)
    parser.add_argument("--cold", help=argparse.SUPPRESS)
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.cold:
        return child_cold(args.cold, args.cache)
    if args.worker:
        return child_worker(
            args.worker[0], int(args.worker[1]), args.cache, args.sentences, args.queries
        )
    if args.quick:
        args.rounds, args.sentences, args.queries = 1, 500, 50
        args.cold_runs = args.export_runs = 1
    note = machine_note()
    with tempfile.TemporaryDirectory(prefix="omoide-embed-bench-") as tmp:
        export = measure_export(Path(tmp), args.export_runs)
        cache = str(Path(tmp) / "export-0")  # already exported: cold starts and workers load it
        cold = measure_cold(cache, args.cold_runs)
        warm = measure_warm(cache, args)
    text = report(warm, cold, export)
    print(text)
    command = " ".join(["python", "bench/embed_bench.py", *sys.argv[1:]])
    print(f"\n{command}; {note['date']}; loadavg at start {note['loadavg_at_start']}")
    if args.json:
        payload = {"machine": note, "args": {k: str(v) for k, v in vars(args).items()}}
        payload |= {"warm": warm, "cold": cold, "export_s": export}
        args.json.write_text(json.dumps(payload, indent=2) + "\n")


if __name__ == "__main__":
    sys.path.insert(0, str(REPO_DIR))
    main()
