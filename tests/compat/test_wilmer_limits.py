"""WilmerAI's QualityMemory honours ``OMOIDE_MAX_MESSAGES`` (issue 36, finding 5): a long
history goes in transactions (episodes) of at most that many messages, every message kept."""

from __future__ import annotations

from pathlib import Path

from omoide import Memory
from omoide.embed import HashEmbedder
from tests.api.conftest import Running, make_settings, running

ALICE = {"user_id": "alice", "scope_id": "default"}
LIMIT = 10


def test_a_long_first_history_is_stored_in_bounded_batches(tmp_path: Path) -> None:
    settings = make_settings(max_messages=LIMIT)
    engine = Memory(tmp_path / "w.db", embedder=HashEmbedder(), settings=settings, workers=0)
    with running(tmp_path / "w.db", HashEmbedder(), engine=engine) as server:
        _check(server)


def _check(server: Running) -> None:
    roles = ("user", "assistant")
    history = [{"role": roles[i % 2], "content": f"message {i}"} for i in range(35)]
    with server.http() as http:
        body = {"messages": history, **ALICE}
        reply = http.post("/v1/discussions/d1/quality-memory", json=body)
        assert reply.status_code == 200, reply.text
        assert reply.json()["stored"] == 35
        again = http.post("/v1/discussions/d1/quality-memory", json=body)
        assert again.json()["stored"] == 0  # a resent history adds nothing
        page = http.get("/v1/sessions/d1/episodes", params=ALICE | {"limit": 100}).json()
    sizes = [len(episode["messages"]) for episode in page["items"]]
    assert max(sizes) <= LIMIT and sum(sizes) == 35
    said = sorted(m["content"] for e in page["items"] for m in e["messages"])
    assert said == sorted(m["content"] for m in history)
