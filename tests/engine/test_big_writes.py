"""One add is one transaction that every other writer waits for, so its size is capped
(``OMOIDE_MAX_MESSAGES``; issue 15, item 8): over the cap is an ``InvalidInput`` (HTTP 422)
naming the limit, and nothing is stored."""

from __future__ import annotations

from pathlib import Path

import pytest

from omoide import InvalidInput, Memory
from omoide.embed import HashEmbedder
from tests.api.conftest import make_settings, running


def _turns(n: int) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"turn {i}"} for i in range(n)]


def test_an_add_over_the_message_cap_is_refused_whole(tmp_path: Path) -> None:
    settings = make_settings(max_messages=5)
    with Memory(tmp_path / "m.db", embedder=HashEmbedder(), workers=0, settings=settings) as m:
        assert len(m.add(_turns(5), user_id="alice", session_id="s")) == 5  # at the cap
        with pytest.raises(InvalidInput, match="6 messages in one add; the limit is 5"):
            m.add(_turns(6), user_id="alice", session_id="s")
        assert m.get_all(user_id="alice").total == 5


def test_the_default_cap_is_a_422_over_http(tmp_path: Path) -> None:
    with running(tmp_path / "m.db", HashEmbedder()) as server, server.http() as http:
        body = {"messages": _turns(1001), "user_id": "alice", "session_id": "s"}
        reply = http.post("/v1/memories", json=body)
        assert reply.status_code == 422 and "OMOIDE_MAX_MESSAGES" in reply.json()["detail"]
        assert server.engine.get_all(user_id="alice").total == 0
