"""``memory-server`` (``python -m omoide.compat.jiuwen.server``) as a real process, started as the
JiuwenMemory document starts it, with our offline defaults instead of the MODEL_* variables."""

from __future__ import annotations

import importlib
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from omoide.config import all_env_names

ROOT = Path(__file__).resolve().parents[2]
SERVER = [sys.executable, "-m", "omoide.compat.jiuwen.server"]

# The document's "Minimal Example" (and the first /add_messages/ example), verbatim. Its second
# /add_messages/ example is not valid shell (the apostrophe of "user's" ends the quoted body);
# test_jiuwen.py sends that body as JSON.
CURL_EXAMPLES = [
    """curl -X POST http://127.0.0.1:8000/add_messages/ \\
  -H "Content-Type: application/json" \\
  -H "Authorization: Bearer ${MEMORY_API_KEY}" \\
  -d '{
    "messages": [
      {"role": "user", "content": "I like jasmine tea"},
      {"role": "assistant", "content": "Got it, I will remember your preference."}
    ],
    "user_id": "user_001",
    "scope_id": "demo"
  }'""",
    """curl -X POST http://127.0.0.1:8000/add_messages/ \\
  -H "Content-Type: application/json" \\
  -H "Authorization: Bearer dev-secret" \\
  -d '{
    "messages": [
      {"role": "user", "content": "I like jasmine tea"},
      {"role": "assistant", "content": "I will remember that you like jasmine tea."}
    ],
    "user_id": "user_001",
    "scope_id": "demo"
  }'""",
    """curl -X POST http://127.0.0.1:8000/search_memory/ \\
  -H "Content-Type: application/json" \\
  -H "Authorization: Bearer dev-secret" \\
  -d '{
    "query": "What does the user like to drink?",
    "num": 5,
    "user_id": "user_001",
    "scope_id": "demo",
    "threshold": 0.3
  }'""",
]


def _env(tmp_path: Path, **values: str) -> dict[str, str]:
    """The current environment minus every omoide setting, with HOME and data in tmp_path."""
    names = {n.upper() for n in all_env_names()}
    env = {k: v for k, v in os.environ.items() if k.upper() not in names}
    env |= {
        "HOME": str(tmp_path / "home"),
        "OMOIDE_DATA_DIR": str(tmp_path / "data"),
        "OMOIDE_EMBEDDER": "hash",
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    return env | values


def test_the_console_script_is_declared() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    module, _, name = scripts["memory-server"].partition(":")
    assert (module, name) == ("omoide.compat.jiuwen.server", "main")
    assert callable(getattr(importlib.import_module(module), name))


@pytest.mark.parametrize("ip", ["0.0.0.0", "192.168.1.20"])
def test_a_public_ip_without_a_key_is_refused_before_listening(tmp_path: Path, ip: str) -> None:
    done = subprocess.run(
        SERVER,
        env=_env(tmp_path, IP=ip, PORT="0"),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, done.stderr  # upstream's sys.exit(1)
    assert f"IP={ip} exposes the service to the network, but MEMORY_API_KEY is not set" in (
        done.stderr
    )
    assert "Traceback" not in done.stderr and "Uvicorn running" not in done.stderr
    assert not (tmp_path / "data" / "omoide.db").exists()


def test_other_invalid_settings_exit_with_code_2(tmp_path: Path) -> None:
    done = subprocess.run(
        SERVER,
        env=_env(tmp_path, IP="127.0.0.1", PORT="eighty"),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert "PORT" in done.stderr and "Traceback" not in done.stderr


def _lines(stream: object, into: queue.Queue[str]) -> None:
    for line in stream:  # type: ignore[attr-defined]
        into.put(line)


@pytest.fixture
def memory_server(tmp_path: Path) -> Iterator[str]:
    """A fresh ``python -m omoide.compat.jiuwen.server`` (MEMORY_API_KEY=dev-secret); its URL.

    With the real embedding model (through torch: no ONNX export into the temporary HOME), as
    a user runs it: JiuwenMemory's ``threshold`` is a similarity, which hash vectors are not."""
    env = _env(
        tmp_path,
        IP="127.0.0.1",
        PORT="0",
        MEMORY_API_KEY="dev-secret",
        OMOIDE_EMBEDDER="local",
        OMOIDE_EMBED_RUNTIME="torch",
    )
    process = subprocess.Popen(
        SERVER, env=env, cwd=tmp_path, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=_lines, args=(process.stderr, lines), daemon=True).start()
    try:
        yield f"http://127.0.0.1:{_wait_for_port(lines)}"
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        assert process.stderr is not None
        process.stderr.close()


def _wait_for_port(lines: queue.Queue[str]) -> int:
    deadline = time.monotonic() + 30
    seen = []
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.5)
        except queue.Empty:
            continue
        seen.append(line)
        found = re.search(r"Uvicorn running on http://127\.0\.0\.1:(\d+)", line)
        if found:
            return int(found.group(1))
    raise AssertionError("memory-server did not start:\n" + "".join(seen))


def test_the_documented_examples_work_against_a_fresh_server(memory_server: str) -> None:
    with httpx.Client(base_url=memory_server, timeout=30) as http:
        root = http.get("/").json()
        assert root["message"] == "Welcome to Memory Engine API"
        assert http.get("/health").json()["message"] == "Memory Engine API is running"
        denied = http.post("/search_memory/", json={"query": "tea"})
        assert denied.status_code == 401
        assert denied.json()["detail"] == "Unauthorized: invalid or missing API key"
    curl = shutil.which("curl")
    if curl is None:
        pytest.skip("curl is not installed: the examples were checked over httpx only")
    replies = []
    for example in CURL_EXAMPLES:
        command = example.replace("http://127.0.0.1:8000", memory_server)
        done = subprocess.run(
            ["bash", "-c", command],
            env=os.environ | {"MEMORY_API_KEY": "dev-secret"},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        replies.append(json.loads(done.stdout))
    for added in replies[:2]:
        assert added["status"] == "success" and added["message"] == "Messages added successfully"
        assert added["extraction"]["state"] == "disabled"
        assert "API_BASE" in added["extraction"]["reason"]
    # No LLM: nothing is extracted, and the stored turns answer as episodic_memory.
    hits = replies[2]["results"]
    assert "I like jasmine tea" in [h["content"] for h in hits]
    assert {h["type"] for h in hits} == {"episodic_memory"}
    assert all(h["score"] >= 0.3 for h in hits)
