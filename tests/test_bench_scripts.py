"""Every maintained benchmark still starts: its imports resolve and it answers ``--help``.

Benchmarks never run in the tests (they are measured by hand, bench/README.md); but a move of
``bench/lib`` or of an omoide module they use breaks a script silently until someone reruns
it, and a benchmark that cannot start cannot reproduce the figures quoted from it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SCRIPTS = sorted((REPO / "bench").glob("*.py"))


def test_the_benchmarks_are_found() -> None:
    assert len(SCRIPTS) >= 10


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_a_benchmark_answers_help(script: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, str(script), "--help"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage" in done.stdout.lower()
