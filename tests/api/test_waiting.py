"""One tenant waiting on a slow LLM cannot stall the server (issue 36, finding 3).

A server with a small thread pool, the fake LLM holding every completion: one key sends more
``/add_messages/`` than its tenant may have waiting. The ones over the bound are refused at
once with 429 and ``Retry-After`` (nothing stored), and another tenant's search answers while
the accepted ones are still waiting for the LLM. Order and acknowledgement only: the LLM is
released after the other tenant's answer came back.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio.to_thread
import httpx
import pytest
from starlette.types import ASGIApp, Receive, Scope, Send

from omoide import Memory
from omoide.embed.protocol import Embedder
from omoide.serve.app import create_app
from tests.api.conftest import KEY, LiveServer, make_settings
from tests.fakes import FakeLLMServer

POOL = 4
PER_TENANT = 2
KEYS = {"alice-key": {"user_id": "alice"}, "bob-key": {"user_id": "bob"}}
SEMANTIC_ONLY = {
    "enable_user_profile": False,
    "enable_episodic_memory": False,
    "enable_summary_memory": False,
    "enable_graph": False,
}
BOUND_S = 60.0


class SmallPool:
    """The app with a thread pool of ``POOL`` (set in the server's own event loop)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            anyio.to_thread.current_default_thread_limiter().total_tokens = POOL
        await self.app(scope, receive, send)


@pytest.fixture
def url(tmp_path: Path, embedder: Embedder, fake_llm: FakeLLMServer) -> Iterator[str]:
    settings = make_settings(
        api_key=KEY,
        tenant_keys=KEYS,
        llm_base_url=fake_llm.url,
        llm_model="fake-model",
        llm_timeout=120.0,
        max_waiting_per_tenant=PER_TENANT,
        max_waiting=POOL - 1,
    )
    engine = Memory(tmp_path / "w.db", embedder=embedder, settings=settings, workers=1)
    live = LiveServer(SmallPool(create_app(settings, memory=engine))).start()  # type: ignore[arg-type]
    try:
        yield live.url
    finally:
        live.stop()
        engine.close()


def _until(condition: Any, what: str) -> None:
    deadline = time.monotonic() + BOUND_S
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def test_a_tenant_waiting_on_a_slow_llm_does_not_stall_another(
    url: str, fake_llm: FakeLLMServer
) -> None:
    for _ in range(10):
        fake_llm.enqueue(json.dumps({"facts": []}))
    replies: dict[int, httpx.Response] = {}
    done: list[int] = []

    def add(n: int) -> None:
        body = {"user_id": "alice", "session_id": f"s{n}", **SEMANTIC_ONLY}
        body["messages"] = [{"role": "user", "content": f"note number {n}"}]
        headers = {"Authorization": "Bearer alice-key"}
        replies[n] = httpx.post(f"{url}/add_messages/", json=body, headers=headers, timeout=120)
        done.append(n)

    senders = [threading.Thread(target=add, args=(n,)) for n in range(POOL + 2)]
    with fake_llm.hold():
        for sender in senders:
            sender.start()
        refused = POOL + 2 - PER_TENANT
        _until(lambda: len(done) >= refused, "the requests over the tenant's bound to be refused")
        _until(lambda: fake_llm.held >= 1, "the LLM to be asked")
        with httpx.Client(base_url=url, timeout=BOUND_S) as bob:
            bob.headers["Authorization"] = "Bearer bob-key"
            search = bob.post("/v1/memories/search", json={"query": "anything"})
            health = bob.get("/health")
        waiting = [n for n in range(POOL + 2) if n not in done]
    assert search.status_code == 200 and health.status_code == 200
    assert len(waiting) == PER_TENANT  # still waiting for the LLM when bob got his answers
    for sender in senders:
        sender.join(BOUND_S)
    statuses = sorted(r.status_code for r in replies.values())
    assert statuses == [200] * PER_TENANT + [429] * refused
    for n, reply in replies.items():
        if reply.status_code == 429:
            assert int(reply.headers["Retry-After"]) >= 1
            assert "OMOIDE_MAX_WAITING_PER_TENANT" in reply.json()["detail"]
        else:
            assert n in waiting and reply.json()["extraction"]["state"] in ("done", "partial")
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {KEY}"}) as admin:
        # JiuwenMemory's "__default__" scope is omoide's default one (issue 33)
        stored = admin.get("/v1/sessions", params={"user_id": "alice"})
    sessions = sorted(item["id"] for item in stored.json()["items"])
    assert sessions == sorted(f"s{n}" for n in waiting)  # nothing of the refused requests


def test_a_key_bound_to_a_user_waits_as_one_tenant_over_all_its_scopes(
    url: str, fake_llm: FakeLLMServer
) -> None:
    """Each request in a scope of its own: counted per scope, one user-bound key took every
    slot of the server (OMOIDE_MAX_WAITING) and every other tenant's waiting add was a 429."""
    for _ in range(10):
        fake_llm.enqueue(json.dumps({"facts": []}))
    replies: dict[int, httpx.Response] = {}

    def add(n: int) -> None:
        body = {"scope_id": f"app-{n}", **SEMANTIC_ONLY}
        body["messages"] = [{"role": "user", "content": f"note number {n}"}]
        headers = {"Authorization": "Bearer alice-key"}
        replies[n] = httpx.post(f"{url}/add_messages/", json=body, headers=headers, timeout=120)

    senders = [threading.Thread(target=add, args=(n,)) for n in range(POOL + 2)]
    with fake_llm.hold():
        for sender in senders:
            sender.start()
        refused = POOL + 2 - PER_TENANT
        _until(lambda: len(replies) >= refused, "the requests over the key's bound to be refused")
    for sender in senders:
        sender.join(BOUND_S)
    statuses = sorted(r.status_code for r in replies.values())
    assert statuses == [200] * PER_TENANT + [429] * refused
    for reply in replies.values():
        if reply.status_code == 429:
            assert "this API key" in reply.json()["detail"], reply.text
            assert "OMOIDE_MAX_WAITING_PER_TENANT" in reply.json()["detail"]
