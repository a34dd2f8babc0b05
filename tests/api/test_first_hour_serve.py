"""What ``omoide serve`` tells a newcomer: its log names the API, /docs, /ui/, /mcp and how to
call the command line, and ``GET /`` says omoide (``memory-server`` keeps JiuwenMemory's
message: tests/compat/test_memory_server.py). A real process on a free loopback port."""

from __future__ import annotations

import queue
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import httpx

from tests.api.test_serve import _env, _lines


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_log_says_where_everything_is_and_root_says_omoide(tmp_path: Path) -> None:
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "omoide", "serve", "--port", str(port)],
        env=_env(tmp_path),
        cwd=tmp_path,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=_lines, args=(process.stderr, lines), daemon=True).start()
    try:
        seen = []
        while not any("Uvicorn running on" in line for line in seen):
            seen.append(lines.get(timeout=60))
        log = "".join(seen)
        base = f"http://127.0.0.1:{port}"
        for where in (f"{base}:", f"{base}/docs", f"{base}/ui/", f"{base}/mcp"):
            assert where in log, log
        assert "omoide --help" in log and ".venv/bin/omoide" in log
        with httpx.Client(base_url=base, timeout=30) as http:
            root = http.get("/").json()
        assert root["message"].startswith("omoide") and root["name"] == "omoide"
        assert (root["docs"], root["ui"], root["mcp"]) == ("/docs", "/ui/", "/mcp")
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
        assert process.stderr is not None
        process.stderr.close()


def test_make_run_says_where_everything_is_before_it_serves() -> None:
    root = Path(__file__).parents[2]
    plan = subprocess.run(
        ["make", "-n", "run"], cwd=root, capture_output=True, text=True, timeout=60
    ).stdout  # -n: the commands make would run, none of them run
    serving = plan.index(".venv/bin/omoide serve")
    told = plan[:serving]
    for where in ("/docs", "/ui/", "/mcp", "GET / lists the routes", ".venv/bin/omoide --help"):
        assert where in told, plan
    assert "source .venv/bin/activate" in told
