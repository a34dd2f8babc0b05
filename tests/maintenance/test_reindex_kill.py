"""A killed reindex never leaves a memory without a vector or a queued embed job, and a rerun
finishes what it started (issue 15, item 2)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from omoide import Memory
from omoide.embed import HashEmbedder
from omoide.store.protocol import NewMemory

CHILD = Path(__file__).with_name("reindex_child.py")
ACK_WAIT_S = 120  # generous: a loaded machine may take seconds to import omoide


def _populate(path: Path, n: int) -> None:
    with Memory(path, embedder=HashEmbedder(), workers=0) as memory:
        for tenant in range(4):
            memory.add_many(
                [NewMemory(text=f"note {i} about tea {tenant}") for i in range(n // 4)],
                user_id=f"user{tenant}",
            )


def _uncovered(path: Path) -> list[str]:
    """Memories with neither a vector nor a pending embed job naming them."""
    conn = sqlite3.connect(path)
    try:
        queued: set[str] = set()
        for (payload,) in conn.execute(
            "SELECT payload FROM jobs WHERE kind = 'embed' AND state IN ('pending', 'running')"
        ):
            queued.update(json.loads(payload)["memory_ids"])
        rows = conn.execute(
            "SELECT m.id FROM memories m LEFT JOIN memory_vectors v ON v.memory_seq = m.seq"
            " WHERE v.memory_seq IS NULL"
        )
        return [memory_id for (memory_id,) in rows if memory_id not in queued]
    finally:
        conn.close()


def _reindex(path: Path, stop_after: int) -> list[str]:
    """Run the child; kill it once it has printed ``stop_after`` batches (0: let it finish)."""
    lines: list[str] = []
    with subprocess.Popen(
        [sys.executable, str(CHILD), str(path), str(stop_after or 10**9)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    ) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        for line in proc.stdout:
            lines.append(line.strip())
            if stop_after and len(lines) == stop_after:
                proc.kill()  # the child is blocked after committing this batch
                break
        errors = proc.stderr.read()
        proc.wait(timeout=ACK_WAIT_S)
    if not stop_after:
        assert proc.returncode == 0, errors
    return lines


def test_a_killed_reindex_leaves_every_memory_findable_and_a_rerun_completes(
    tmp_path: Path,
) -> None:
    path = tmp_path / "omoide.db"
    _populate(path, 400)
    acked = _reindex(path, stop_after=3)
    assert acked[-1].startswith("batch 3 150/400"), acked
    assert _uncovered(path) == []
    with Memory(path, embedder=HashEmbedder(), workers=0) as memory:  # the old model still works
        assert memory.search("tea", user_id="user0", recipe="vector").hits
        assert memory.health()["vectors"]["status"] == "ok"
    finished = _reindex(path, stop_after=0)
    assert finished[-1] == "done 250", finished  # resumed: only what was not staged
    assert _uncovered(path) == []
    with Memory(path, embedder=HashEmbedder(32), workers=0) as memory:
        assert memory.health()["vectors"] == {"status": "ok", "without_vector": 0}
        result = memory.search("note 7 about tea 1", user_id="user1", recipe="vector")
        assert result.hits and not result.degraded
        best = [h.memory.text for h in result.hits if h.signals["vector"].score > 0.999]
        assert "note 7 about tea 1" in best  # the 32-d vector of its own text
