"""Two API servers and three workers as real processes on one PostgreSQL schema.

Both servers start at the same moment on an empty schema (the migration runs once, under the
advisory lock), then take concurrent writes, deletes and searches. The servers' embedder goes
down once they are up, so every write queues an ``embed`` job for the workers; each worker has
its own fake embedder, and the first worker's hangs on its first request, so it is SIGKILLed
holding a running job, which another worker re-claims when the short lease expires. Every wait
is on state another process makes observable, with a bound.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from omoide.store.postgres import PostgresStore
from omoide.types import Job, JobState
from tests.fakes import FakeLLMServer
from tests.postgres.processes import BOUND_S, Proc, environment, procs, until

__all__ = ["procs"]  # the fixture, used by name
ROUNDS = 40  # per client thread: 40 adds, 8 deletes, 40 searches, 24 reads by id


@pytest.fixture
def fakes() -> Iterator[list[FakeLLMServer]]:
    """The servers' embedder, then one per worker."""
    servers = [FakeLLMServer(hang_seconds=BOUND_S).start() for _ in range(4)]
    yield servers
    for server in servers:
        server.stop()


class Traffic:
    """One client's bounded loop: writes through its own server, reads through the other."""

    def __init__(self, user: str, own: httpx.Client, other: httpx.Client) -> None:
        self.user, self.own, self.other = user, own, other
        self.acknowledged: dict[str, str] = {}  # memory id -> its unique word
        self.deleted: dict[str, str] = {}
        self.requests = 0
        self.error: BaseException | None = None

    def call(self, client: httpx.Client, method: str, url: str, **kw: Any) -> httpx.Response:
        self.requests += 1
        return client.request(method, url, **kw)

    def search(self, client: httpx.Client, word: str) -> list[str]:
        body = {"query": word, "user_id": self.user, "limit": 20}
        found = self.call(client, "POST", "/v1/memories/search", json=body)
        assert found.status_code == 200, found.text
        return [hit["memory"]["id"] for hit in found.json()["hits"]]

    def run(self) -> None:
        try:
            for i in range(ROUNDS):
                self.step(i)
        except BaseException as exc:  # re-raised by the test's thread
            self.error = exc

    def step(self, i: int) -> None:
        word = f"zq{self.user}x{i}"
        body = {"text": f"note {i} about {word}", "user_id": self.user}
        added = self.call(self.own, "POST", "/v1/memories", json=body)
        assert added.status_code == 201, added.text
        memory_id = added.json()["items"][0]["id"]
        self.acknowledged[memory_id] = word
        if i % 5 == 4:  # delete an earlier write, then neither server may return it
            victim, victim_word = next(iter(self.acknowledged.items()))
            del self.acknowledged[victim]
            gone = self.call(self.own, "DELETE", f"/v1/memories/{victim}", params=self.q)
            assert gone.status_code in (200, 204), gone.text
            self.deleted[victim] = victim_word
            for client in (self.own, self.other):
                assert victim not in self.search(client, victim_word)
            read = self.call(self.other, "GET", f"/v1/memories/{victim}", params=self.q)
            assert read.status_code == 404, read.text
        if i % 5 in (1, 3):  # the other server reads and finds a fresh write
            assert memory_id in self.search(self.other, word)
            read = self.call(self.other, "GET", f"/v1/memories/{memory_id}", params=self.q)
            assert read.status_code == 200, read.text
        if i % 5 == 2:
            self.search(self.own, f"note {i}")

    @property
    def q(self) -> dict[str, str]:
        return {"user_id": self.user}


@contextmanager
def traffic(ports: list[int]) -> Iterator[list[Traffic]]:
    """Both clients' loops, running in threads inside the block; joined and closed after it."""
    clients = [httpx.Client(base_url=f"http://127.0.0.1:{p}", timeout=30) for p in ports]
    loops = [Traffic("ann", clients[0], clients[1]), Traffic("ben", clients[1], clients[0])]
    threads = [threading.Thread(target=loop.run) for loop in loops]
    for thread in threads:
        thread.start()
    try:
        yield loops
    finally:
        for thread in threads:
            thread.join(BOUND_S)
        for client in clients:
            client.close()


def test_two_servers_and_three_workers_share_one_database(
    tmp_path: Path, pg_url: str, fakes: list[FakeLLMServer], procs: list[Proc]
) -> None:
    servers_fake, hung_fake, *_ = fakes
    for name in ("a", "b"):  # both at once on the empty schema: one of them migrates
        env = environment(tmp_path, pg_url, servers_fake)
        procs.append(Proc(tmp_path, env, f"serve-{name}", "serve", "--workers", "0", "--port", "0"))
    ready = r"Uvicorn running on http://127\.0\.0\.1:(\d+)"
    ports = [int(proc.wait_for(ready).group(1)) for proc in procs]
    assert not any("Traceback" in proc.text() for proc in procs)
    servers_fake.stop()  # from now on every write queues an embed job
    hung_fake.enqueue_fault("hang", "embeddings")  # the first worker never gets its answer
    for i, fake in enumerate(fakes[1:]):
        procs.append(Proc(tmp_path, environment(tmp_path, pg_url, fake), f"worker-{i}", "worker"))
    for worker in procs[2:]:
        worker.wait_for("omoide worker: started")

    with closing(PostgresStore(pg_url)) as store, traffic(ports) as loops:
        until(lambda: len(hung_fake.embedding_requests) == 1, "the first worker to start a job")
        running = store.jobs.list_jobs(None, JobState.RUNNING, 100, 0)
        assert len(running) >= len(texts(hung_fake)), "the hung worker holds running jobs"
        procs[2].process.send_signal(signal.SIGKILL)
        procs[2].process.wait(timeout=BOUND_S)
        until(lambda: all(loop_done(loop) for loop in loops), "both clients to finish")
        for loop in loops:
            assert loop.error is None, repr(loop.error)
        until(lambda: all_done(store), "every job to end done")
        jobs = store.jobs.list_jobs(None, None, 1000, 0)
        check_jobs(loops, jobs, {job.id for job in running}, fakes)
        check_reads(loops, ports)


def loop_done(loop: Traffic) -> bool:
    if loop.error is not None:
        raise AssertionError(repr(loop.error))
    return len(loop.acknowledged) + len(loop.deleted) == ROUNDS


def all_done(store: PostgresStore) -> bool:
    jobs = store.jobs.list_jobs(None, None, 1000, 0)
    return all(job.state is JobState.DONE for job in jobs)


def texts(fake: FakeLLMServer) -> list[str]:
    """Every text ``fake`` was asked to embed, one entry per time it was asked."""
    inputs = [body["input"] for body in fake.embedding_requests]
    return [t for given in inputs for t in (given if isinstance(given, list) else [given])]


def check_jobs(
    loops: list[Traffic], jobs: list[Job], running: set[int], fakes: list[FakeLLMServer]
) -> None:
    """One job per acknowledged write; only jobs the killed worker held were claimed again
    (its batch: the one it was running and those it had claimed next); no text embedded twice."""
    writes = sum(len(loop.acknowledged) + len(loop.deleted) for loop in loops)
    assert len(jobs) == writes  # none lost
    words = {w: m for loop in loops for m, w in {**loop.acknowledged, **loop.deleted}.items()}
    hung = {words[text.rsplit(" ", 1)[1]] for text in texts(fakes[1])}
    assert hung  # the killed worker was mid-embedding
    again = {job.id for job in jobs if job.attempts != 1}
    assert again <= running and all(job.attempts <= 2 for job in jobs)
    assert {job.id for job in jobs if set(job.payload["memory_ids"]) & hung} <= again
    embedded = texts(fakes[2]) + texts(fakes[3])
    for loop in loops:  # a surviving worker embedded each memory at most once
        for memory_id, word in {**loop.acknowledged, **loop.deleted}.items():
            count = sum(text.endswith(f" {word}") for text in embedded)
            assert count == 1 if memory_id in loop.acknowledged else count <= 1, word


def check_reads(loops: list[Traffic], ports: list[int]) -> None:
    """Through either server: every acknowledged write found and embedded, no deleted one."""
    for loop in loops:
        for port in ports:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
                for memory_id, word in {**loop.acknowledged, **loop.deleted}.items():
                    hits = loop.search(http, word)
                    got = http.get(f"/v1/memories/{memory_id}", params=loop.q)
                    if memory_id in loop.deleted:
                        assert memory_id not in hits and got.status_code == 404
                    else:
                        assert memory_id in hits and got.json()["embedded"] is True
