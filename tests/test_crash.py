"""Crash safety: a writer killed with SIGKILL at random points loses nothing it acknowledged.

The kill comes after the writer has acknowledged a random number of writes (read from its
stdout), not after a fixed time: on a loaded machine ``import omoide`` alone can take seconds.
"""

from __future__ import annotations

import os
import queue
import random
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO

import pytest

from omoide import Memory
from omoide.embed import HashEmbedder

WRITER = Path(__file__).with_name("crash_writer.py")


ACK_WAIT_S = 90  # a generous bound for the first acknowledgements on a loaded machine


def _lines(stream: IO[str], into: queue.Queue[str | None]) -> None:
    for line in stream:
        into.put(line)
    into.put(None)  # end of output: the writer exited or was killed


def _run_and_kill(path: Path, run: int, acks: int) -> list[tuple[str, str]]:
    """Start the writer, SIGKILL it once it has acknowledged ``acks`` memories, and return
    every memory it acknowledged (some more may arrive between the count and the kill)."""
    proc = subprocess.Popen(
        [sys.executable, str(WRITER), str(path), str(run)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.stdout is not None
    lines: queue.Queue[str | None] = queue.Queue()
    reader = threading.Thread(target=_lines, args=(proc.stdout, lines), daemon=True)
    reader.start()
    out: list[str] = []
    try:
        while len(out) < acks:
            line = lines.get(timeout=ACK_WAIT_S)
            if line is None:
                break  # the writer died on its own: reported below with its stderr
            out.append(line)
    except queue.Empty:
        pass
    finally:
        proc.send_signal(signal.SIGKILL)
        _, err = proc.communicate(timeout=30)
        reader.join(30)
    while not lines.empty():  # what the writer printed between the count and the kill
        rest = lines.get_nowait()
        if rest is not None:
            out.append(rest)
    acked = [tuple(line.split()) for line in out if len(line.split()) == 2]
    assert len(acked) >= acks, f"the writer acknowledged {len(acked)} of {acks}: {err[-2000:]}"
    return acked  # type: ignore[return-value]


@pytest.mark.slow
@pytest.mark.timeout(3 * ACK_WAIT_S + 60)
@pytest.mark.sqlite_only(
    "SIGKILLs a process writing the SQLite file, then checks the file's FTS5 and vector tables"
    " (a killed client on PostgreSQL: tests/postgres/test_multiprocess.py)"
)
def test_sigkill_loses_no_acknowledged_memory(tmp_path: Path) -> None:
    path = tmp_path / "crash.db"
    rng = random.Random(7)
    acked: list[tuple[str, str]] = []
    for run in range(3):
        acked += _run_and_kill(path, run, rng.randint(20, 400))

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
