"""Many clients at once over loopback: no 5xx, no lost writes, and no head-of-line blocking."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import numpy as np

from omoide import Memory
from omoide.embed.protocol import Embedder
from tests.api.conftest import Running

CLIENTS = 50
ROUNDS = 2  # per client: bounded by work done, never by the clock (a loaded machine is slow)


Acked = list[tuple[str, str]]  # (user_id, memory_id)


def _client_loop(url: str, number: int) -> tuple[Acked, list[int]]:
    acknowledged: Acked = []
    statuses: list[int] = []
    user = f"user-{number % 5}"
    with httpx.Client(base_url=url, timeout=60) as http:
        for round_ in range(ROUNDS):
            text = f"client {number} round {round_}: note about topic {number * 7 + round_}"
            added = http.post("/v1/memories", json={"text": text, "user_id": user})
            statuses.append(added.status_code)
            if added.status_code == 201:
                acknowledged += [(user, i["id"]) for i in added.json()["items"]]
            found = http.post(
                "/v1/memories/search", json={"query": f"topic {number}", "user_id": user}
            )
            statuses.append(found.status_code)
    return acknowledged, statuses


def test_fifty_clients_adding_and_searching(server: Running) -> None:
    barrier = threading.Barrier(CLIENTS)

    def run(number: int) -> tuple[Acked, list[int]]:
        barrier.wait()
        return _client_loop(server.url, number)

    with ThreadPoolExecutor(CLIENTS) as pool:
        results = list(pool.map(run, range(CLIENTS)))
    statuses = [s for _, batch in results for s in batch]
    acknowledged = [a for batch, _ in results for a in batch]
    assert statuses and all(s < 500 for s in statuses), sorted(set(statuses))
    assert set(statuses) <= {200, 201}
    assert len(acknowledged) == CLIENTS * ROUNDS  # every write got through
    for user, memory_id in acknowledged:
        assert server.engine.get(memory_id, user_id=user).id == memory_id
    assert server.engine.store.admin.stats()["memories"] == len(acknowledged)


class BlockingEmbedder:
    """Wraps an embedder; embedding a text containing SLOW blocks until ``release`` is set."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.entered = threading.Event()
        self.release = threading.Event()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if any("SLOW" in t for t in texts):
            self.entered.set()
            self.release.wait(120)
        return self.inner.embed(texts)


def test_a_slow_request_does_not_block_others(
    start_server: Callable[..., Running], tmp_path: Path, embedder: Embedder
) -> None:
    blocking = BlockingEmbedder(embedder)
    memory = Memory(tmp_path / "slow.db", embedder=blocking, workers=1)
    server = start_server(engine=memory)
    with server.http() as slow, server.http() as fast, ThreadPoolExecutor(1) as pool:
        pending = pool.submit(slow.post, "/v1/memories", json={"text": "SLOW note"})
        assert blocking.entered.wait(60), "the slow request never reached the embedder"
        try:
            # the slow request is still inside the embedder: these answer only if it does
            # not hold the server (a stalled server makes them time out, and the test fail)
            assert fast.get("/health", timeout=30).status_code == 200
            assert fast.get("/v1/memories", timeout=30).status_code == 200
            assert not pending.done()
        finally:
            blocking.release.set()
        assert pending.result().status_code == 201
