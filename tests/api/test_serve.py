"""``python -m omoide serve`` as a real process: unsafe or invalid settings stop it before it
listens, with one message and no traceback; with a key it serves and shuts down cleanly."""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from omoide.config import all_env_names

ROOT = Path(__file__).resolve().parents[2]


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


def _serve(tmp_path: Path, **values: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "omoide", "serve"],
        env=_env(tmp_path, **values),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("variable", ["IP", "OMOIDE_HOST"])
def test_a_public_bind_without_a_key_is_refused(tmp_path: Path, variable: str) -> None:
    done = _serve(tmp_path, **{variable: "0.0.0.0", "PORT": "0"})
    assert done.returncode == 2, done.stderr
    assert "refusing to listen on 0.0.0.0 without an API key" in done.stderr
    assert "MEMORY_API_KEY" in done.stderr
    assert "Traceback" not in done.stderr and "Uvicorn running" not in done.stderr
    assert not (tmp_path / "data" / "omoide.db").exists()  # it stopped before opening anything


def test_an_empty_key_counts_as_no_key(tmp_path: Path) -> None:
    done = _serve(tmp_path, IP="0.0.0.0", MEMORY_API_KEY="", PORT="0")
    assert done.returncode == 2 and "MEMORY_API_KEY" in done.stderr


@pytest.mark.parametrize(
    ("values", "named"),
    [
        ({"PORT": "eighty"}, "PORT"),
        ({"OMOIDE_PORT": "70000"}, "OMOIDE_PORT"),
        ({"OMOIDE_TENANT_KEYS": "{not json"}, "OMOIDE_TENANT_KEYS"),
        ({"OMOIDE_WORKERS": "-1"}, "OMOIDE_WORKERS"),
        ({"DB_URL": "mysql://db/omoide"}, "DB_URL"),
        ({"OMOIDE_LOG_LEVEL": "loud"}, "OMOIDE_LOG_LEVEL"),
    ],
)
def test_invalid_settings_stop_the_server_with_a_message(
    tmp_path: Path, values: dict[str, str], named: str
) -> None:
    done = _serve(tmp_path, **values)
    assert done.returncode != 0
    assert named in done.stderr
    assert "Traceback" not in done.stderr and "Uvicorn running" not in done.stderr


def _lines(stream: object, into: queue.Queue[str]) -> None:
    for line in stream:  # type: ignore[attr-defined]
        into.put(line)


def test_a_public_bind_with_a_key_serves_and_stops_cleanly(tmp_path: Path) -> None:
    env = _env(tmp_path, IP="0.0.0.0", PORT="0", MEMORY_API_KEY="k3y")
    process = subprocess.Popen(
        [sys.executable, "-m", "omoide", "serve"],
        env=env,
        cwd=tmp_path,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(target=_lines, args=(process.stderr, lines), daemon=True)
    reader.start()
    try:
        port = _wait_for_port(lines)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
            assert http.get("/health").status_code == 200
            assert http.get("/v1/memories").status_code == 401
            ok = http.post(
                "/v1/memories", json={"text": "hello"}, headers={"Authorization": "Bearer k3y"}
            )
            assert ok.status_code == 201
        process.send_signal(signal.SIGTERM)
        # uvicorn shuts down gracefully, then re-raises the signal it caught.
        assert process.wait(timeout=30) in (0, -signal.SIGTERM)
        reader.join(10)
        rest = "".join(lines.get() for _ in range(lines.qsize()))
        assert "Application shutdown complete" in rest and "Traceback" not in rest
    finally:
        if process.poll() is None:
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
        found = re.search(r"Uvicorn running on http://0\.0\.0\.0:(\d+)", line)
        if found:
            return int(found.group(1))
    raise AssertionError("server did not start:\n" + "".join(seen))
