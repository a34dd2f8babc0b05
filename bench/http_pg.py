"""HTTP throughput: 2 API servers + 2 worker processes on PostgreSQL vs 1 server on SQLite.

    python bench/http_pg.py                       # real all-MiniLM-L6-v2 (as http_bench.py)
    python bench/http_pg.py --embedder hash       # no model: HTTP + store cost alone
    python bench/http_pg.py --db-url postgresql://...   # an existing server (default: pgserver)
    python bench/http_pg.py --pg-servers 1              # one server each (its own job workers)
    python bench/http_pg.py --pg-setting synchronous_commit=off   # a setting on every session

Same calls as ``http_bench.py`` (its sentences, queries, cells and clients): each add stores one
new sentence in a second tenant, each search (hybrid, limit 10) embeds its query and runs over
the pre-filled tenant. SQLite: one ``omoide serve`` (its own job workers). PostgreSQL: two
``omoide serve --workers 0`` and two ``omoide worker`` processes over one fresh schema; the
clients are spread round-robin over the two servers (as a load balancer would). With
``--pg-servers 1``: one ``omoide serve`` with its own job workers, as SQLite's. Both
setups run in the same invocation, one after the other, on the same machine.

Each cell also gives the CPU milliseconds per call of the omoide processes and, for the
pgserver this script starts, of PostgreSQL's: on a machine where the database shares the cores
with the server, what PostgreSQL spends is taken from the embedder and the server.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
import http_bench as hb
from lib.common import REPO_DIR, machine_note, table
from lib.cpu import children, cpu_seconds, postmaster_pid
from lib.pgserver import drop_schema, schema_url, start_server


def spawn(args: list[str], db_url: str, embedder: str, port: int | None = None) -> Any:
    env = os.environ | {
        "OMOIDE_DB_URL": db_url,
        "OMOIDE_EMBEDDER": embedder,
        "OMOIDE_LOG_LEVEL": "warning",
        "PYTHONPATH": str(REPO_DIR),
    }
    if port is not None:
        env |= {"OMOIDE_HOST": "127.0.0.1", "OMOIDE_PORT": str(port)}
    env.pop("OMOIDE_API_KEY", None)
    env.pop("MEMORY_API_KEY", None)
    return subprocess.Popen([sys.executable, "-m", "omoide", *args], env=env, cwd=REPO_DIR)


def wait_healthy(url: str) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)  # polling a starting server: the condition is checked each round
    raise SystemExit(f"the server at {url} did not start")


def spread(urls: list[str]) -> dict[str, Callable[[], hb.Call]]:
    """``http_bench``'s calls, each new client bound to the next server in turn."""
    per_server = [hb.http_calls(url) for url in urls]
    turn = [0]

    def next_server(op: str) -> Callable[[], hb.Call]:
        def make() -> hb.Call:
            turn[0] += 1
            return per_server[turn[0] % len(urls)][op]()

        return make

    return {op: next_server(op) for op in ("add", "search")}


def run_setup(name: str, db_url: str, servers: int, workers: int, args: argparse.Namespace):
    from omoide import Memory, NewMemory
    from omoide.config import Settings

    memory = Memory(db_url, settings=Settings(embedder=args.embedder), workers=0)
    rng = random.Random(7)
    for start in range(0, args.memories, hb.BATCH):
        count = min(hb.BATCH, args.memories - start)
        items = [NewMemory(text=hb.sentence(rng)) for _ in range(count)]
        memory.add_many(items, user_id=hb.TENANT)
    memory.close()
    procs, urls = [], []
    try:
        for _ in range(servers):
            port = hb.free_port()
            serve = ["serve"] if workers < 0 else ["serve", "--workers", "0"]
            procs.append(spawn(serve, db_url, args.embedder, port))
            urls.append(f"http://127.0.0.1:{port}")
        procs += [spawn(["worker"], db_url, args.embedder) for _ in range(max(workers, 0))]
        for url in urls:
            wait_healthy(url)
        print(f"[{name}] {servers} server(s), {max(workers, 0)} worker process(es)", flush=True)
        return hb.measure(name, spread(urls), args.levels, args.seconds, cpu_of(procs, args))
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(60)


def cpu_of(procs: list[Any], args: argparse.Namespace) -> Callable[[], dict[str, float]]:
    """CPU seconds of the omoide processes and of the PostgreSQL server's processes (backends
    come and go with connections: those alive at each reading; none for ``--db-url``)."""
    postmaster = postmaster_pid(args.pgdata) if args.pgdata else None
    pids = [p.pid for p in procs]

    def read() -> dict[str, float]:
        pg = [postmaster, *children(postmaster)] if postmaster else []
        return {"omoide": cpu_seconds(pids), "postgres": cpu_seconds(pg)}

    return read


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db-url", help="a PostgreSQL URL, or pgserver (default): start one")
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--seconds", type=float, default=4.0, help="per cell")
    parser.add_argument("--clients", default="1,4,16,32")
    parser.add_argument("--embedder", choices=["local", "hash"], default="local")
    parser.add_argument(
        "--pg-servers", type=int, default=2, help="1: one server with its own job workers"
    )
    parser.add_argument(
        "--pg-setting",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a PostgreSQL setting of every session (repeatable)",
    )
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    args.levels = [int(x) for x in args.clients.split(",")]
    server = None
    base = args.db_url
    args.pgdata = None
    if base is None or base == "pgserver":
        base, server = start_server()
        args.pgdata = Path(server.pgdata)
    schema = f"http_{uuid.uuid4().hex[:12]}"
    workdir = Path(tempfile.mkdtemp(prefix="omoide-http-pg-"))
    try:
        rows = run_setup("sqlite", f"sqlite:///{workdir / 'bench.db'}", 1, -1, args)
        pg_url = schema_url(base, schema, *args.pg_setting)
        if args.pg_servers == 1:
            rows += run_setup("postgres", pg_url, 1, -1, args)
        else:
            rows += run_setup("postgres", pg_url, args.pg_servers, 2, args)
    finally:
        drop_schema(base, schema)
    by_key = {(r["mode"], r["op"], r["clients"]): r for r in rows}
    out = []
    for op in ("add", "search"):
        for clients in args.levels:
            s, p = by_key[("sqlite", op, clients)], by_key[("postgres", op, clients)]
            out.append(
                [
                    op,
                    clients,
                    f"{s['ops_s']:.0f} ({s['p50_ms']:.0f}/{s['p95_ms']:.0f})",
                    f"{p['ops_s']:.0f} ({p['p50_ms']:.0f}/{p['p95_ms']:.0f})",
                    f"{p['ops_s'] / s['ops_s']:.2f}",
                    f"{s['omoide_cpu_ms']:.1f} / {p['omoide_cpu_ms']:.1f}"
                    + (f" + {p['postgres_cpu_ms']:.1f}" if args.pgdata else ""),
                    f"{s['errors']}/{p['errors']}",
                ]
            )
    pg_setup = "PG 1 server" if args.pg_servers == 1 else f"PG {args.pg_servers}+2"
    headers = ["op", "clients", "SQLite 1 server ops/s (p50/p95 ms)", f"{pg_setup} ops/s"]
    headers += ["PG/SQLite", "CPU ms/call: SQLite / PG omoide + PostgreSQL"]
    print("\n" + table([*headers, "errors S/P"], out))
    if args.json:
        payload = {"machine": machine_note(), "args": {k: str(v) for k, v in vars(args).items()}}
        args.json.write_text(json.dumps(payload | {"rows": rows}, indent=2))
    del server


if __name__ == "__main__":
    main()
