"""Workers on PostgreSQL are woken by ``NOTIFY`` when a job is enqueued, not by their poll.

The worker polls only every 60 s (the longest setting); the job a server enqueues must be
done well before that, so it was the notification that woke the worker. A job retried or
deferred for later wakes the watchers when it becomes due (not at the commit, when nothing is
due yet), and a failed job given a retry wakes them at once.
"""

from __future__ import annotations

import threading
import time
from contextlib import closing
from pathlib import Path

import httpx

from omoide.store.postgres import PostgresStore
from omoide.types import Job, JobState, Scope
from tests.fakes import FakeLLMServer
from tests.postgres.processes import Proc, environment, procs, until

__all__ = ["procs"]  # the fixture, used by name
POLL_S = 60.0
BOUND_S = 20.0  # a third of the poll interval: generous for a busy machine, far below a poll


def test_a_job_enqueued_through_a_server_wakes_an_idle_worker(
    tmp_path: Path, pg_url: str, procs: list[Proc]
) -> None:
    with FakeLLMServer() as servers_fake, FakeLLMServer() as workers_fake:
        serve_env = environment(tmp_path, pg_url, servers_fake)
        procs.append(Proc(tmp_path, serve_env, "serve", "serve", "--workers", "0", "--port", "0"))
        port = int(procs[0].wait_for(r"Uvicorn running on http://127\.0\.0\.1:(\d+)").group(1))
        servers_fake.stop()  # the server's own embedding fails: the write queues an embed job
        worker_env = environment(tmp_path, pg_url, workers_fake)
        worker_env["OMOIDE_WORKER_POLL_S"] = str(POLL_S)
        procs.append(Proc(tmp_path, worker_env, "worker", "worker"))
        procs[1].wait_for("omoide worker: started")  # it listens from here on, idle
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
            added = http.post("/v1/memories", json={"text": "oolong tea", "user_id": "alice"})
            assert added.status_code == 201, added.text
            assert added.json()["items"][0]["embedded"] is False
            enqueued = time.monotonic()
            with closing(PostgresStore(pg_url)) as store:
                [job] = store.jobs.list_jobs(None, None, 10, 0)
                until(
                    lambda: store.jobs.get_job(job.id).state is JobState.DONE,
                    "the worker to be woken",
                    BOUND_S,
                )
            assert time.monotonic() - enqueued < BOUND_S
            got = http.get(
                f"/v1/memories/{added.json()['items'][0]['id']}", params={"user_id": "alice"}
            )
            assert got.json()["embedded"] is True


class Wakes:
    """The times a store's watcher woke its (would-be) workers, and a wait for the next."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self._event = threading.Event()

    def __call__(self) -> None:
        self.times.append(time.monotonic())
        self._event.set()

    def next(self) -> float:
        assert self._event.wait(BOUND_S), "no wake-up"
        self._event.clear()
        return self.times[-1]


def _claimed_once(store: PostgresStore) -> Job:
    [job] = store.jobs.claim_jobs(10, 60_000)
    return job


def _watched_job(store: PostgresStore, wakes: Wakes) -> Job:
    """A job enqueued while the watcher listens, claimed after its wake-up arrived."""
    with store.transaction() as tx:
        tx.jobs.enqueue_job(Scope(), "echo", {}, max_attempts=2)
    wakes.next()  # the enqueue's own notification
    return _claimed_once(store)


def test_a_job_retried_later_wakes_the_workers_when_it_is_due(pg_store: PostgresStore) -> None:
    wakes = Wakes()
    stop = pg_store.watch_jobs(wakes)
    try:
        job = _watched_job(pg_store, wakes)
        failed_at = time.monotonic()
        assert pg_store.jobs.fail_job(job.id, "down", backoff_ms=1_500) is JobState.PENDING
        woken = wakes.next()
        assert woken - failed_at >= 1.5  # not at the commit, when nothing was due
        assert _claimed_once(pg_store).id == job.id  # due when the wake-up came
    finally:
        stop()


def test_a_deferred_job_wakes_the_workers_when_it_is_due(pg_store: PostgresStore) -> None:
    wakes = Wakes()
    stop = pg_store.watch_jobs(wakes)
    try:
        job = _watched_job(pg_store, wakes)
        deferred_at = time.monotonic()
        assert pg_store.jobs.defer_job(job.id, "LLM down", delay_ms=1_200) is JobState.PENDING
        assert wakes.next() - deferred_at >= 1.2
        assert _claimed_once(pg_store).id == job.id
    finally:
        stop()


def test_a_failed_job_given_a_retry_wakes_the_workers_at_once(pg_store: PostgresStore) -> None:
    wakes = Wakes()
    stop = pg_store.watch_jobs(wakes)
    try:
        job = _watched_job(pg_store, wakes)
        pg_store.jobs.fail_job(job.id, "down", backoff_ms=0)  # attempt 1 of 2
        wakes.next()
        job = _claimed_once(pg_store)
        assert pg_store.jobs.fail_job(job.id, "down", backoff_ms=0) is JobState.FAILED
        pg_store.jobs.retry_job(None, job.id)
        wakes.next()  # the watcher wakes only on notifications: this one is the retry's
        assert _claimed_once(pg_store).id == job.id
    finally:
        stop()
