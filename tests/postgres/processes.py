"""Omoide processes for the multi-process tests: started without ``--db`` (the store is
``OMOIDE_DB_URL``), stderr in a file read for their start-up lines, killed at the end."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from omoide.config import all_env_names
from tests.fakes import FakeLLMServer

ROOT = Path(__file__).resolve().parents[2]
BOUND_S = 90.0


def until(condition: Callable[[], bool], what: str, bound: float = BOUND_S) -> None:
    deadline = time.monotonic() + bound
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


class Proc:
    """An omoide process (no ``--db``: the store is ``OMOIDE_DB_URL``), stderr in a file."""

    def __init__(self, tmp_path: Path, env: dict[str, str], name: str, *args: str) -> None:
        self.log = tmp_path / f"{name}.log"
        self._out = self.log.open("w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "omoide", *args],
            env=env,
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=self._out,
        )

    def text(self) -> str:
        return self.log.read_text()

    def wait_for(self, pattern: str) -> re.Match[str]:
        found: list[re.Match[str]] = []

        def seen() -> bool:
            assert self.process.poll() is None, self.text()
            match = re.search(pattern, self.text())
            found.extend([match] if match else [])
            return match is not None

        until(seen, f"{pattern!r} in {self.log.name}")
        return found[0]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self._out.close()


@pytest.fixture
def procs() -> Iterator[list[Proc]]:
    started: list[Proc] = []
    yield started
    for proc in started:
        proc.stop()


def environment(tmp_path: Path, db_url: str, embedder: FakeLLMServer) -> dict[str, str]:
    names = {n.upper() for n in all_env_names()}
    base = {k: v for k, v in os.environ.items() if k.upper() not in names}
    return base | {
        "HOME": str(tmp_path / "home"),
        "OMOIDE_DATA_DIR": str(tmp_path / "data"),
        "OMOIDE_DB_URL": db_url,
        "OMOIDE_EMBEDDER": "openai",
        "OMOIDE_EMBED_API_BASE": embedder.url,
        "OMOIDE_WORKER_POLL_S": "0.05",
        "OMOIDE_JOB_LEASE_S": "2",
        "PYTHONPATH": str(ROOT),
    }
