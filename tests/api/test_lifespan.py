"""``create_app(settings)`` without a memory owns one: its workers live exactly as long as the
app, and shutting down leaves queued jobs in the database instead of dropping them."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx

from omoide import Memory
from omoide.embed import HashEmbedder
from omoide.serve.app import create_app
from omoide.types import Job, JobState, Scope
from tests.api.conftest import LiveServer, make_settings


def _workers() -> int:
    return sum(t.name == "omoide-worker" and t.is_alive() for t in threading.enumerate())


def _failed_once(jobs: list[Job]) -> bool:
    return bool(jobs) and jobs[0].attempts >= 1 and jobs[0].state is JobState.PENDING


def test_the_app_starts_and_stops_its_engine_and_keeps_jobs(tmp_path: Path) -> None:
    settings = make_settings(data_dir=tmp_path, embedder="hash", workers=2)
    before = _workers()
    app = create_app(settings)
    assert _workers() == before  # nothing runs until the server starts
    live = LiveServer(app).start()
    try:
        assert _workers() == before + 2
        with httpx.Client(base_url=live.url, timeout=30) as http:
            assert http.post("/v1/memories", json={"text": "kept across restarts"}).status_code
        engine = app.state.memory
        with engine.store.transaction() as tx:  # a job that keeps failing, retried later
            job_id = tx.jobs.enqueue_job(Scope(), "not-yet-known", {}, max_attempts=5)
        deadline = time.monotonic() + 10
        while not _failed_once(engine.list_jobs()):
            assert time.monotonic() < deadline, "the worker never ran the job"
            time.sleep(0.02)
    finally:
        live.stop()
    assert _workers() == before
    with Memory(tmp_path / "omoide.db", embedder=HashEmbedder(), workers=0) as reopened:
        assert reopened.get_all().total == 1
        (job,) = reopened.list_jobs()
        assert (job.id, job.state) == (job_id, JobState.PENDING) and job.attempts >= 1
