"""Ingest with real embeddings, the way users add: two code trees alternated in one run.

    python bench/ingest_real.py --base /work/wt-ingest-base          # baseline vs this tree
    python bench/ingest_real.py --base DIR --rounds 3 --modes turn,http8
    python bench/ingest_real.py --head-env OMOIDE_EMBED_RUNTIME=onnx-int8   # one tree, two runtimes

The LoCoMo dev turns (``<speaker>: <text>``, 788 turns of 2 conversations; user = conversation,
``session_<n>``, ``infer=False``) are added by each mode:

* ``turn``: one ``Memory.add`` per turn, as a chat app does (``Memory(path)``, default workers);
* ``session``: one ``Memory.add`` per session (all its turns as messages);
* ``queued``: the turns added one per ``add`` (no session) while the embedder is down, so each
  waits in an ``embed`` job of its own; the clock runs while ``run_jobs()`` embeds them with
  the real model (an outage's recovery, or a reindex's catch-up jobs);
* ``http1`` / ``http8``: ``omoide serve`` on a loopback port, one turn per ``POST /v1/memories``,
  from 1 or 8 concurrent httpx clients (8: the sessions dealt round-robin to the clients, each
  client adds its sessions' turns in order).

Each (tree, mode) runs in a fresh process with ``PYTHONPATH`` at that tree and a fresh database;
the default embedder (ONNX all-MiniLM-L6-v2, the export cached in ``~/.omoide/models``) is warmed
before the clock starts. The trees alternate A B B A ... within each mode, so load drifts hit
both; ratios are per pair (head / base), reported as median and range. On a shared machine the
CPU time the ingesting process used (the server's, for HTTP; all its threads, the ONNX pool
included) is the steadier figure: "CPU base/head" > 1 means head needs less CPU per item.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from lib.common import DEFAULT_DATA, REPO_DIR, load_locomo, machine_note, table

MODES = ("turn", "session", "http1", "http8", "queued")
PYTHON = sys.executable


def turns_by_session(data: Path) -> list[tuple[str, str, list[str]]]:
    """(user, session, turn texts) in conversation and session order."""
    out = []
    for conv in load_locomo(data):
        for n, _, turns in conv.sessions:
            out.append((conv.sample_id, f"session_{n}", [t.text for t in turns]))
    return out


# the child: one library mode in the tree on PYTHONPATH ----------------------------------------
class Down:
    """An embedder that is down (retryable): every add queues an embed job."""

    name = "sentence-transformers/all-MiniLM-L6-v2"

    def embed(self, texts: Any) -> Any:  # noqa: ARG002 - the Embedder signature
        from omoide.errors import EmbedderError

        raise EmbedderError("down for the benchmark", retryable=True)


def queued(data: Path, db: Path) -> dict[str, Any]:
    from omoide.memory import Memory

    sessions = turns_by_session(data)
    with Memory(db, embedder=Down(), workers=0) as memory:  # type: ignore[arg-type]
        for user, _, texts in sessions:
            for text in texts:
                memory.add([{"role": "user", "content": text}], user_id=user, infer=False)
    memory = Memory(db, workers=0)
    try:
        memory.embedder.embed(["warm up"])  # type: ignore[attr-defined]
        cpu0, start = time.process_time(), time.perf_counter()
        jobs = memory.run_jobs(100_000)
        seconds = time.perf_counter() - start
        cpu = time.process_time() - cpu0
    finally:
        memory.close()
    items = sum(len(t) for _, _, t in sessions)
    assert jobs == items, (jobs, items)
    return {"items": items, "seconds": seconds, "cpu_seconds": cpu}


def child(mode: str, data: Path, db: Path) -> dict[str, Any]:
    from omoide.memory import Memory

    if mode == "queued":
        return queued(data, db)
    sessions = turns_by_session(data)
    memory = Memory(db)
    try:
        memory.add([{"role": "user", "content": "warm up"}], user_id="warmup", infer=False)
        cpu0, start = time.process_time(), time.perf_counter()
        for user, session, texts in sessions:
            if mode == "turn":
                for text in texts:
                    msg = [{"role": "user", "content": text}]
                    memory.add(msg, user_id=user, session_id=session, infer=False)
            else:
                msgs = [{"role": "user", "content": t} for t in texts]
                memory.add(msgs, user_id=user, session_id=session, infer=False)
        seconds = time.perf_counter() - start
        cpu = time.process_time() - cpu0
    finally:
        memory.close()
    items = sum(len(t) for _, _, t in sessions)
    return {"items": items, "seconds": seconds, "cpu_seconds": cpu}


# HTTP: the server in the tree, the clients here -----------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (its threads included), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_ready(server: subprocess.Popen[bytes], base: str, tree: Path) -> None:
    """Until the server answers /health, then one untimed add (loads the model)."""
    import httpx

    with httpx.Client(base_url=base, timeout=120) as c:
        for _ in range(600):  # the server is up within a minute even on a loaded machine
            try:
                if c.get("/health").status_code < 500:
                    break
            except httpx.TransportError:
                pass
            if server.poll() is not None:
                raise SystemExit(f"server of {tree} exited with {server.returncode}")
            time.sleep(0.1)
        warm = {"text": "warm up", "user_id": "warmup", "infer": False}
        c.post("/v1/memories", json=warm).raise_for_status()


def http_run(
    tree: Path, clients: int, data: Path, workdir: Path, extra: dict[str, str]
) -> dict[str, Any]:
    import httpx

    port = free_port()
    env = {**os.environ, **extra, "PYTHONPATH": str(tree)}
    env["OMOIDE_DB_URL"] = f"sqlite:///{workdir}/h.db"
    env.pop("OMOIDE_API_KEY", None)
    server = subprocess.Popen(
        [PYTHON, "-m", "omoide", "serve", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        cwd=workdir,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_ready(server, base, tree)
        sessions = turns_by_session(data)
        lanes: list[list[tuple[str, str, list[str]]]] = [[] for _ in range(clients)]
        for i, s in enumerate(sessions):
            lanes[i % clients].append(s)
        errors: list[BaseException] = []

        def lane(work: list[tuple[str, str, list[str]]]) -> None:
            try:
                with httpx.Client(base_url=base, timeout=120) as c:
                    for user, session, texts in work:
                        for text in texts:
                            body = {
                                "text": text,
                                "user_id": user,
                                "session_id": session,
                                "infer": False,
                            }
                            c.post("/v1/memories", json=body).raise_for_status()
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=lane, args=(w,)) for w in lanes]
        cpu0, start = cpu_seconds(server.pid), time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        seconds = time.perf_counter() - start
        cpu = cpu_seconds(server.pid) - cpu0
        if errors:
            raise errors[0]
    finally:
        server.terminate()
        server.wait(30)
    return {"items": sum(len(t) for _, _, t in sessions), "seconds": seconds, "cpu_seconds": cpu}


def run(tree: Path, mode: str, data: Path, extra: dict[str, str]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="ingest-real-") as tmp:
        workdir = Path(tmp)
        if mode.startswith("http"):
            out = http_run(tree, int(mode[4:]), data, workdir, extra)
        else:
            env = {**os.environ, **extra, "PYTHONPATH": str(tree)}
            cmd = [PYTHON, __file__, "--child", mode, "--data", str(data), "--db"]
            proc = subprocess.run(
                [*cmd, str(workdir / "m.db")], env=env, capture_output=True, text=True
            )
            if proc.returncode:
                raise SystemExit(f"{tree} {mode}: {proc.stderr[-2000:]}")
            out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["items_per_s"] = out["items"] / out["seconds"]
    out["load"] = round(os.getloadavg()[0], 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", type=Path, help="the baseline tree (a git worktree)")
    parser.add_argument("--head", type=Path, default=REPO_DIR, help="the tree compared to it")
    parser.add_argument("--rounds", type=int, default=2, help="pairs per mode (A B, then B A)")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--json", type=Path)
    for side in ("base", "head"):
        parser.add_argument(
            f"--{side}-env",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help=f"an environment variable of the {side} runs (OMOIDE_EMBED_RUNTIME=onnx-int8)",
        )
    parser.add_argument("--child", choices=("turn", "session", "queued"), help=argparse.SUPPRESS)
    parser.add_argument("--db", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.data, args.db)))
        return
    trees = {"base": (args.base or REPO_DIR).resolve(), "head": args.head.resolve()}
    extra = {
        "base": dict(kv.split("=", 1) for kv in args.base_env),
        "head": dict(kv.split("=", 1) for kv in args.head_env),
    }
    note = machine_note()
    results: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for mode in args.modes.split(","):
        results[mode] = {"base": [], "head": []}
        for r in range(args.rounds):
            order = ("base", "head") if r % 2 == 0 else ("head", "base")
            for name in order:
                res = run(trees[name], mode, args.data, extra[name])
                results[mode][name].append(res)
                print(f"{mode} {name}: {res['items_per_s']:.1f} items/s (load {res['load']})")
                sys.stdout.flush()
    rows = []
    for mode, by in results.items():
        pairs = list(zip(by["base"], by["head"], strict=True))
        ratios = [h["items_per_s"] / b["items_per_s"] for b, h in pairs]
        cpu = [b["cpu_seconds"] / h["cpu_seconds"] for b, h in pairs]
        rows.append(
            (
                mode,
                statistics.median(x["items_per_s"] for x in by["base"]),
                statistics.median(x["items_per_s"] for x in by["head"]),
                f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})",
                f"{statistics.median(cpu):.2f} ({min(cpu):.2f}-{max(cpu):.2f})",
            )
        )
    print(
        f"\nbase {trees['base']} {extra['base'] or ''} vs head {trees['head']}"
        f" {extra['head'] or ''}, load at start {note['loadavg_at_start']}"
    )
    headers = ["mode", "base items/s", "head items/s", "head/base (range)", "CPU base/head"]
    print(table(headers, rows))
    if args.json:
        args.json.write_text(json.dumps({"machine": note, "results": results}, indent=1))


if __name__ == "__main__":
    main()
