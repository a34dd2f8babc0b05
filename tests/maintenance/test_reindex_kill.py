"""A killed reindex never leaves a memory without a vector or a queued embed job, and a rerun
finishes what it started (issue 15, item 2)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from omoide import Memory
from omoide.embed import HashEmbedder
from omoide.store.protocol import NewMemory
from omoide.types import JobState, MemoryItem

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
    """Memories with neither a vector nor a pending (or running) embed job naming them."""
    with Memory(path, embedder=HashEmbedder(), workers=0) as memory:
        queued: set[str] = set()
        for state in (JobState.PENDING, JobState.RUNNING):
            for job in memory.store.jobs.list_jobs(None, state, 10_000, 0):
                if job.kind == "embed":
                    queued.update(job.payload["memory_ids"])
        return [m.id for m in _every_memory(memory) if not m.embedded and m.id not in queued]


def _every_memory(memory: Memory) -> list[MemoryItem]:
    found: list[MemoryItem] = []
    for tenant in range(4):
        mine: list[MemoryItem] = []
        while page := memory.get_all(user_id=f"user{tenant}", offset=len(mine)).items:
            mine += page
        found += mine
    return found


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
