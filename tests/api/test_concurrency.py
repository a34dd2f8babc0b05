"""Many clients at once over loopback: no 5xx, no lost writes, and no head-of-line blocking."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import numpy as np

from omoide import Memory
from omoide.embed.protocol import Embedder
from tests.api.conftest import Running

CLIENTS = 50
ROUNDS = 3  # per client; with the deadline this bounds the test to a few seconds
DEADLINE_S = 4.0


Acked = list[tuple[str, str]]  # (user_id, memory_id)


def _client_loop(url: str, number: int, stop_at: float) -> tuple[Acked, list[int]]:
    acknowledged: Acked = []
    statuses: list[int] = []
    user = f"user-{number % 5}"
    with httpx.Client(base_url=url, timeout=60) as http:
        for round_ in range(ROUNDS):
            if time.monotonic() > stop_at:
                break
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
    stop_at = time.monotonic() + DEADLINE_S
    barrier = threading.Barrier(CLIENTS)

    def run(number: int) -> tuple[Acked, list[int]]:
        barrier.wait()
        return _client_loop(server.url, number, stop_at)

    with ThreadPoolExecutor(CLIENTS) as pool:
        results = list(pool.map(run, range(CLIENTS)))
    statuses = [s for _, batch in results for s in batch]
    acknowledged = [a for batch, _ in results for a in batch]
    assert statuses and all(s < 500 for s in statuses), sorted(set(statuses))
    assert set(statuses) <= {200, 201}
    assert len(acknowledged) >= CLIENTS  # every client got at least one write through
    for user, memory_id in acknowledged:
        assert server.engine.get(memory_id, user_id=user).id == memory_id
    assert server.engine.store.admin.stats()["memories"] == len(acknowledged)


class SlowEmbedder:
    """Wraps an embedder; embedding a text containing SLOW takes a second."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if any("SLOW" in t for t in texts):
            time.sleep(1.0)
        return self.inner.embed(texts)


def test_a_slow_request_does_not_block_others(
    start_server: Callable[..., Running], tmp_path: Path, embedder: Embedder
) -> None:
    memory = Memory(tmp_path / "slow.db", embedder=SlowEmbedder(embedder), workers=1)
    server = start_server(engine=memory)
    with server.http() as slow, server.http() as fast, ThreadPoolExecutor(1) as pool:
        pending = pool.submit(slow.post, "/v1/memories", json={"text": "SLOW note"})
        time.sleep(0.2)
        started = time.monotonic()
        assert fast.get("/health").status_code == 200
        assert fast.get("/v1/memories").status_code == 200
        elapsed = time.monotonic() - started
        assert pending.result().status_code == 201
    assert elapsed < 0.5, f"the server stalled for {elapsed:.2f}s behind a slow request"
