"""``omoide serve`` as a process: no secret in its errors, a warning when it serves without a
key, and a database only its owner can read (issue 15, points 4 and 6)."""

from __future__ import annotations

import os
import queue
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from tests.api.test_serve import _env, _serve

SECRET = "sup3r-secret-tenant-key"


@pytest.mark.parametrize(
    "value",
    [
        f'{{"{SECRET}": {{"scope_id": "x"}}}}',
        f'{{"{SECRET}": "alice"}}',
        f'{{"{SECRET}": {{"user_id": 5}}}}',
        f'{{"{SECRET}": {{"user_id": "a", "extra": 1}}, "other": 1}}',
        f'{{"{SECRET}": {{"user_id": "a"}}',
    ],
)
def test_a_malformed_tenant_keys_setting_never_echoes_a_key(tmp_path: Path, value: str) -> None:
    done = _serve(tmp_path, OMOIDE_TENANT_KEYS=value, PORT="0")
    assert done.returncode != 0, done.stderr
    assert "OMOIDE_TENANT_KEYS" in done.stderr
    assert SECRET not in done.stderr + done.stdout
    assert "Traceback" not in done.stderr


def _read(stream: object, into: queue.Queue[str]) -> None:
    for line in stream:  # type: ignore[attr-defined]
        into.put(line)


def _wait_for(lines: queue.Queue[str], needle: str, seen: list[str]) -> str:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.5)
        except queue.Empty:
            continue
        seen.append(line)
        if needle in line:
            return line
    raise AssertionError(f"no {needle!r} in:\n" + "".join(seen))


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.sqlite_only("checks the modes of the SQLite file and its -wal in the data folder")
def test_a_keyless_server_warns_and_keeps_its_files_private(tmp_path: Path) -> None:
    env = _env(tmp_path, PORT="0")
    env.pop("OMOIDE_DATA_DIR")  # the default: ~/.omoide under the fresh HOME
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import os; os.umask(0o022); from omoide.cli import main; main()",
            "serve",
        ],
        env=env,
        cwd=tmp_path,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=_read, args=(process.stderr, lines), daemon=True).start()
    seen: list[str] = []
    try:
        running = _wait_for(lines, "Uvicorn running on", seen)
        port = int(running.rsplit(":", 1)[1].split()[0])
        assert any("without an API key" in line and "WARNING" in line for line in seen), seen
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
            assert http.post("/v1/memories", json={"text": "a private memory"}).status_code == 201
            assert http.get("/health", headers={"Host": "rebound.example"}).status_code == 400
        home = tmp_path / "home" / ".omoide"
        assert _mode(home) == 0o700
        files = [p for p in home.iterdir() if p.name.startswith("omoide.db")]
        assert {p.name for p in files} >= {"omoide.db", "omoide.db-wal"}
        assert {p.name: _mode(p) for p in files} == {p.name: 0o600 for p in files}
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
            assert process.stderr is not None
            process.stderr.close()
    assert os.path.exists(tmp_path / "home" / ".omoide" / "omoide.db")
