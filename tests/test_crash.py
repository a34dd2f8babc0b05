"""Crash safety: a writer killed with SIGKILL at random points loses nothing it acknowledged."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from omoide import Memory
from omoide.embed import HashEmbedder

WRITER = Path(__file__).with_name("crash_writer.py")


def _run_and_kill(path: Path, run: int, seconds: float) -> list[tuple[str, str]]:
    proc = subprocess.Popen(
        [sys.executable, str(WRITER), str(path), str(run)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    time.sleep(seconds)
    proc.send_signal(signal.SIGKILL)
    out, err = proc.communicate(timeout=30)
    acked = [tuple(line.split()) for line in out.splitlines() if len(line.split()) == 2]
    assert acked, f"the writer acknowledged nothing before the kill: {err[-2000:]}"
    return acked  # type: ignore[return-value]


@pytest.mark.slow
def test_sigkill_loses_no_acknowledged_memory(tmp_path: Path) -> None:
    path = tmp_path / "crash.db"
    rng = random.Random(7)
    acked: list[tuple[str, str]] = []
    for run in range(3):
        acked += _run_and_kill(path, run, rng.uniform(1.5, 3.0))

    with Memory(path, embedder=HashEmbedder(), workers=0) as memory:
        for user_id, memory_id in acked:
            assert memory.get(memory_id, user_id=user_id).id == memory_id
        conn = memory.store._writer
        conn.execute("INSERT INTO memories_fts(memories_fts) VALUES ('integrity-check')")
        stats = memory.store.admin.stats()
        assert stats["memories_fts"] == stats["memories"]
        orphans = conn.execute(
            "SELECT count(*) FROM memory_vectors v LEFT JOIN memories m ON m.seq = v.memory_seq"
            " WHERE m.seq IS NULL"
        ).fetchone()[0]
        assert orphans == 0
        unembedded = conn.execute(
            "SELECT count(*) FROM memories m WHERE NOT EXISTS"
            " (SELECT 1 FROM memory_vectors v WHERE v.memory_seq = m.seq)"
        ).fetchone()[0]
        assert unembedded > 0, "no add ran during the outage: the test lost its point"
        conn.execute("UPDATE jobs SET run_after = 0, lease_until = 0")  # skip backoff and leases
        memory.run_jobs(limit=100_000)
        assert (
            memory.store.admin.stats()["memory_vectors"] == memory.store.admin.stats()["memories"]
        )
        assert memory.job_counts()["pending"] == 0
