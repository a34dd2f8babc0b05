"""HTTP throughput and latency of add and search, next to the in-process library, same run.

    python bench/http_bench.py                    # 10k memories, real MiniLM, ~2 minutes
    python bench/http_bench.py --embedder hash    # no model: the HTTP + store overhead alone
    python bench/http_bench.py --seconds 2 --memories 2000   # a quick look
    python bench/http_bench.py --db /tmp/http-10k.db   # keep the pre-filled store for next time

Steps: (1) pre-fill one tenant with ``--memories`` synthetic sentences through
``Engine.add_many`` (batches of 500); (2) library: 1, 8 and 32 threads call ``Memory.add`` /
``Memory.search`` on that store for ``--seconds`` each; (3) HTTP: ``python -m omoide serve`` in
its own process on a loopback port over the same file, and 1, 8 and 32 client threads (one
``httpx.Client`` each, keep-alive) call ``POST /v1/memories`` / ``POST /v1/memories/search``.
Every add is one new sentence (one embedding) into a second tenant, so the searched tenant stays
at ``--memories``; every search embeds its query. Latency is per call, measured by the caller;
throughput is calls completed / wall time of the cell.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lib.common import REPO_DIR, machine_note, percentiles_ms, table

TENANT = "bench"  # the 10k memories that searches run against
WRITER = "bench-writes"  # adds go to another tenant, so the searched one stays the same size
BATCH = 500

NAMES = ["Ana", "Bruno", "Chiara", "Dmitri", "Emeka", "Fatima", "Goro", "Hana", "Ivan", "Jia"]
VERBS = ["bought", "lost", "repaired", "painted", "sold", "borrowed", "found", "ordered", "hid"]
THINGS = [
    "a red bicycle", "the old piano", "a jar of honey", "two concert tickets", "a green kettle",
    "the family photo album", "a chess set", "a pair of hiking boots", "a sourdough starter",
    "the garden shed key", "a vintage camera", "a box of oolong tea", "a paper kite",
]  # fmt: skip
PLACES = [
    "in Lisbon", "at the flea market", "near the harbour", "in the attic", "at the office",
    "on the night train", "behind the bakery", "in Osaka", "at grandma's house", "by the lake",
]  # fmt: skip
TIMES = ["last Monday", "in March", "yesterday", "two years ago", "before the wedding", "today"]
MOODS = ["and felt great", "by accident", "for a friend", "after a long debate", "on a whim", ""]


def sentence(rng: random.Random) -> str:
    parts = [rng.choice(NAMES), rng.choice(VERBS), rng.choice(THINGS), rng.choice(PLACES)]
    parts += [rng.choice(TIMES), rng.choice(MOODS)]
    return " ".join(p for p in parts if p) + f" (note {rng.randrange(10**6)})."


def query(rng: random.Random) -> str:
    return f"what did {rng.choice(NAMES)} do with {rng.choice(THINGS)} {rng.choice(PLACES)}?"


# setup ------------------------------------------------------------------------------------
def prefill(db: Path, count: int, embedder_kind: str) -> tuple[float, Any]:
    """Fill the searched tenant up to ``count`` memories (a reused ``--db`` may have them)."""
    from omoide import Memory, NewMemory
    from omoide.config import Settings

    memory = Memory(db, settings=Settings(embedder=embedder_kind), workers=0)
    rng = random.Random(7)
    started = time.perf_counter()
    for start in range(memory.get_all(user_id=TENANT, limit=1).total, count, BATCH):
        items = [NewMemory(text=sentence(rng)) for _ in range(min(BATCH, count - start))]
        memory.add_many(items, user_id=TENANT)
    return time.perf_counter() - started, memory


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(db: Path, embedder_kind: str) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = os.environ | {
        "OMOIDE_DB_URL": f"sqlite:///{db}",
        "OMOIDE_HOST": "127.0.0.1",
        "OMOIDE_PORT": str(port),
        "OMOIDE_EMBEDDER": embedder_kind,
        "OMOIDE_LOG_LEVEL": "warning",
        "PYTHONPATH": str(REPO_DIR),
    }
    env.pop("OMOIDE_API_KEY", None)
    env.pop("MEMORY_API_KEY", None)
    process = subprocess.Popen([sys.executable, "-m", "omoide", "serve"], env=env, cwd=REPO_DIR)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                return process, url
        except httpx.TransportError:
            time.sleep(0.2)
    process.kill()
    raise SystemExit("the server did not start")


# measuring --------------------------------------------------------------------------------
Call = Callable[[random.Random], None]


def run_cell(make_call: Callable[[], Call], clients: int, seconds: float) -> dict[str, Any]:
    """``clients`` threads, each with its own ``make_call()``, calling it for ``seconds``."""
    latencies: list[list[float]] = [[] for _ in range(clients)]
    errors = [0] * clients
    barrier = threading.Barrier(clients + 1)
    stop_at = [0.0]

    def worker(index: int) -> None:
        call, rng = make_call(), random.Random(index)
        barrier.wait()
        while time.perf_counter() < stop_at[0]:
            started = time.perf_counter()
            try:
                call(rng)
            except Exception:  # a failed call is counted, not timed
                errors[index] += 1
                continue
            latencies[index].append(time.perf_counter() - started)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    stop_at[0] = time.perf_counter() + seconds
    began = time.perf_counter()
    barrier.wait()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - began
    flat = [x for per in latencies for x in per]
    return {"ops": len(flat), "ops_s": len(flat) / elapsed, "errors": sum(errors)} | (
        percentiles_ms(flat)
    )


def library_calls(memory: Any) -> dict[str, Callable[[], Call]]:
    def add_one(rng: random.Random) -> None:
        memory.add(sentence(rng), user_id=WRITER)

    def search_one(rng: random.Random) -> None:
        memory.search(query(rng), user_id=TENANT, limit=10)

    return {"add": lambda: add_one, "search": lambda: search_one}


def http_calls(url: str) -> dict[str, Callable[[], Call]]:
    def client_call(path: str, body: Callable[[random.Random], dict[str, Any]]) -> Call:
        http = httpx.Client(base_url=url, timeout=120)

        def call(rng: random.Random) -> None:
            response = http.post(path, json=body(rng))
            response.raise_for_status()

        return call

    def add() -> Call:
        return client_call("/v1/memories", lambda rng: {"text": sentence(rng), "user_id": WRITER})

    def search() -> Call:
        return client_call(
            "/v1/memories/search", lambda rng: {"query": query(rng), "user_id": TENANT}
        )

    return {"add": add, "search": search}


def measure(
    mode: str,
    calls: dict[str, Callable[[], Call]],
    levels: list[int],
    seconds: float,
    cpu: Callable[[], dict[str, float]] | None = None,
) -> list[dict[str, Any]]:
    """Each op at each client count; with ``cpu`` (CPU seconds by process group, read before
    and after a cell), also each group's CPU milliseconds per call (``<group>_cpu_ms``)."""
    rows = []
    for op, make_call in calls.items():
        make_call()(random.Random(0))  # warm up: model loaded, tenant vectors cached
        for clients in levels:
            before = cpu() if cpu else {}
            cell = run_cell(make_call, clients, seconds)
            if cpu:
                spent = {k: v - before[k] for k, v in cpu().items()}
                calls_done = max(1, cell["ops"] + cell["errors"])
                cell |= {f"{k}_cpu_ms": 1000 * v / calls_done for k, v in spent.items()}
            rows.append({"mode": mode, "op": op, "clients": clients} | cell)
            print(
                f"  {mode:7} {op:6} x{clients:<3} {cell['ops_s']:7.1f} ops/s"
                f"  p50 {cell['p50_ms']:7.1f} ms  p95 {cell['p95_ms']:7.1f} ms",
                flush=True,
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--seconds", type=float, default=4.0, help="per cell")
    parser.add_argument("--clients", default="1,8,32")
    parser.add_argument("--embedder", choices=["local", "hash"], default="local")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument(
        "--db", type=Path, help="keep the pre-filled store here and reuse it on the next run"
    )
    args = parser.parse_args()
    levels = [int(x) for x in args.clients.split(",")]

    workdir = Path(tempfile.mkdtemp(prefix="omoide-http-bench-"))
    db = args.db or workdir / "bench.db"
    try:
        print(f"pre-filling {args.memories} memories ({args.embedder} embedder)...", flush=True)
        fill_s, memory = prefill(db, args.memories, args.embedder)
        print(f"  done in {fill_s:.1f} s", flush=True)
        rows = measure("library", library_calls(memory), levels, args.seconds)
        memory.close()
        process, url = start_server(db, args.embedder)
        try:
            rows += measure("http", http_calls(url), levels, args.seconds)
        finally:
            process.terminate()
            process.wait(30)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    headers = ["op", "clients", "mode", "ops/s", "p50 ms", "p95 ms", "errors"]
    keys = ["op", "clients", "mode", "ops_s", "p50_ms", "p95_ms", "errors"]
    ordered = sorted(rows, key=lambda r: (r["op"], r["clients"], r["mode"] != "library"))
    print("\n" + table(headers, [[r[k] for k in keys] for r in ordered]))
    if args.json:
        payload = {"machine": machine_note(), "args": vars(args)}  # paths as text
        body = payload | {"prefill_s": fill_s, "rows": rows}
        args.json.write_text(json.dumps(body, indent=2, default=str))


if __name__ == "__main__":
    main()
