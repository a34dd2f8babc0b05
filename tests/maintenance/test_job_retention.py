"""Finished jobs are deleted once their retention is over (OMOIDE_JOB_RETENTION_DAYS), by the
process that runs jobs, so the job table does not grow with every add for ever (which jobs the
store deletes, and which never: tests/store/test_jobs.py)."""

from __future__ import annotations

import time
from pathlib import Path

from omoide import Memory
from omoide.config import Settings
from omoide.embed import HashEmbedder
from omoide.jobs.kinds import EMBED, EmbedPayload
from omoide.jobs.queue import enqueue
from omoide.types import Scope

TENANT = Scope(user_id="alice", scope_id="default")


def _enqueue(memory: Memory) -> int:
    with memory.store.transaction() as tx:
        return enqueue(tx.jobs, TENANT, EMBED, EmbedPayload(memory_ids=[]))


def _job_ids(memory: Memory) -> set[int]:
    return {job.id for job in memory.list_jobs()}


def test_a_finished_job_is_deleted_after_its_retention(tmp_path: Path) -> None:
    # 1e-6 days: 86 ms, so the worker's ticker (every 50 ms) prunes it soon after it ends
    settings = Settings(job_retention_days=1e-6, worker_poll_s=0.05)
    with Memory(
        tmp_path / "omoide.db", embedder=HashEmbedder(), settings=settings, workers=1
    ) as memory:
        job_id = _enqueue(memory)
        deadline = time.monotonic() + 60.0
        while job_id in _job_ids(memory):  # done, then deleted: polling a state, bounded
            assert time.monotonic() < deadline, memory.list_jobs()
            time.sleep(0.02)


def test_a_library_without_worker_threads_prunes_when_it_runs_jobs(tmp_path: Path) -> None:
    settings = Settings(job_retention_days=1e-6)
    with Memory(
        tmp_path / "omoide.db", embedder=HashEmbedder(), settings=settings, workers=0
    ) as memory:
        job_id = _enqueue(memory)
        memory.engine.run_jobs()  # what a wait runs in this thread
        assert job_id in _job_ids(memory)  # done, within its retention
        deadline = time.monotonic() + 60.0
        while job_id in _job_ids(memory):
            assert time.monotonic() < deadline, memory.list_jobs()
            time.sleep(0.02)
            memory.engine.run_jobs()
