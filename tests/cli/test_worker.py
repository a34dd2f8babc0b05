"""``omoide worker`` and ``omoide serve --workers 0`` as real processes on one SQLite file.

The embedder of both processes is the fake OpenAI-compatible server of this test process, so a
test decides when an embedding fails (the server queues an ``embed`` job) or hangs (a worker is
caught mid-job). Every wait is on state another process makes observable, with a bound.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from omoide import store as seam
from omoide.config import all_env_names
from omoide.jobs.kinds import EMBED, EmbedPayload
from omoide.jobs.queue import enqueue
from omoide.store.protocol import NewMemory, Store
from omoide.types import Job, JobState, Scope
from tests.fakes import FakeLLMServer

ROOT = Path(__file__).resolve().parents[2]
ALICE = Scope(user_id="alice", scope_id="default")
BOUND_S = 60.0


def until(condition: Callable[[], bool], what: str, bound: float = BOUND_S) -> None:
    """Poll ``condition`` until it holds; fail naming ``what`` after ``bound`` seconds."""
    deadline = time.monotonic() + bound
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


@pytest.fixture
def fake() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(hang_seconds=BOUND_S) as server:
        yield server


@pytest.fixture
def env(tmp_path: Path, fake: FakeLLMServer) -> dict[str, str]:
    """No inherited omoide setting; the fake embedder; a quick poll and a short lease."""
    names = {n.upper() for n in all_env_names()}
    base = {k: v for k, v in os.environ.items() if k.upper() not in names}
    return base | {
        "HOME": str(tmp_path / "home"),
        "OMOIDE_DATA_DIR": str(tmp_path / "data"),
        "OMOIDE_EMBEDDER": "openai",
        "OMOIDE_EMBED_API_BASE": fake.url,
        "OMOIDE_WORKER_POLL_S": "0.05",
        "OMOIDE_JOB_LEASE_S": "2",
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }


class Proc:
    """An omoide process with its stderr in a file (read for its start-up line)."""

    def __init__(self, tmp_path: Path, env: dict[str, str], name: str, *args: str) -> None:
        self.log = tmp_path / f"{name}.log"
        self._out = self.log.open("w")
        db = str(tmp_path / "omoide.db")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "omoide", "--db", db, *args],
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


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """This test's own handle on the database the processes share."""
    handle = seam.open_store(tmp_path / "omoide.db")
    yield handle
    handle.close()


def start(procs: list[Proc], tmp_path: Path, env: dict[str, str], *args: str) -> Proc:
    proc = Proc(tmp_path, env, f"{args[0]}-{len(procs)}", *args)
    procs.append(proc)
    return proc


def job(store: Store, job_id: int) -> Job:
    return store.jobs.get_job(job_id)


def queue_embed_job(store: Store) -> tuple[str, int]:
    """A memory without a vector and its embed job, as a server writes them (embedder down)."""
    with store.transaction() as tx:
        item = tx.memories.insert_memory(ALICE, NewMemory("jasmine tea"), "test")
        job_id = enqueue(tx.jobs, ALICE, EMBED, EmbedPayload(memory_ids=[item.id]))
    return item.id, job_id


def test_a_job_queued_through_a_server_without_workers_is_run_by_the_worker(
    tmp_path: Path, env: dict[str, str], fake: FakeLLMServer, procs: list[Proc], store: Store
) -> None:
    server = start(procs, tmp_path, env, "serve", "--workers", "0", "--port", "0")
    port = int(server.wait_for(r"Uvicorn running on http://127\.0\.0\.1:(\d+)").group(1))
    fake.enqueue_fault("http_500", "embeddings")  # the server's own embedding fails: queued
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
        added = http.post("/v1/memories", json={"text": "I like jasmine tea", "user_id": "alice"})
        assert added.status_code == 201, added.text
        memory_id = added.json()["items"][0]["id"]
        [queued] = store.jobs.list_jobs(None, None, 10, 0)
        assert queued.kind == "embed" and queued.state is JobState.PENDING  # nobody ran it
        start(procs, tmp_path, env, "worker").wait_for("omoide worker: started, threads=1")
        until(lambda: job(store, queued.id).state is JobState.DONE, "the worker to run the job")
        got = http.get(f"/v1/memories/{memory_id}", params={"user_id": "alice"})
        assert got.json()["embedded"] is True  # the server sees the worker's vector
        hits = http.post("/v1/memories/search", json={"query": "jasmine tea", "user_id": "alice"})
        assert [h["memory"]["id"] for h in hits.json()["hits"]][:1] == [memory_id]


def test_sigterm_stops_the_worker_after_its_batch(
    tmp_path: Path, env: dict[str, str], fake: FakeLLMServer, procs: list[Proc], store: Store
) -> None:
    fake.hang_seconds = 2.0  # the batch in hand: an embedding that takes two seconds to fail
    fake.enqueue_fault("hang", "embeddings")
    worker = start(procs, tmp_path, env, "worker")
    worker.wait_for("omoide worker: started, threads=1")
    _, job_id = queue_embed_job(store)
    until(lambda: len(fake.embedding_requests) == 1, "the worker to call the embedder")
    worker.process.send_signal(signal.SIGTERM)
    assert worker.process.wait(timeout=BOUND_S) == 0, worker.text()
    assert "omoide worker: stopped" in worker.text()
    after = job(store, job_id)
    assert after.state is JobState.PENDING and after.attempts == 1  # its outcome was recorded
    assert "Traceback" not in worker.text()


def test_a_killed_workers_job_is_claimed_again_when_its_lease_expires(
    tmp_path: Path, env: dict[str, str], fake: FakeLLMServer, procs: list[Proc], store: Store
) -> None:
    fake.enqueue_fault("hang", "embeddings")  # the first worker never gets its answer
    memory_id, job_id = queue_embed_job(store)
    first = start(procs, tmp_path, env, "worker")
    until(lambda: len(fake.embedding_requests) == 1, "the first worker to start the job")
    assert job(store, job_id).state is JobState.RUNNING
    first.process.send_signal(signal.SIGKILL)
    first.process.wait(timeout=BOUND_S)
    start(procs, tmp_path, env, "worker")
    until(lambda: job(store, job_id).state is JobState.DONE, "a second worker to re-claim it")
    assert job(store, job_id).attempts == 2
    assert store.memories.get_memories(ALICE, [memory_id])[0].embedded
