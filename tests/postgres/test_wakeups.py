"""Workers on PostgreSQL are woken by ``NOTIFY`` when a job is enqueued, not by their poll.

The worker polls only every 60 s (the longest setting); the job a server enqueues must be
done well before that, so it was the notification that woke the worker.
"""

from __future__ import annotations

import time
from contextlib import closing
from pathlib import Path

import httpx

from omoide.store.postgres import PostgresStore
from omoide.types import JobState
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
