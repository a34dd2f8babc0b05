"""Issue 16, point 10: messages carry the time they were said, on every interface that takes
messages, stored on the episode; extraction reads relative dates from that day, not from the
day the history was imported."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from omoide import Memory
from omoide.api.app import create_app
from omoide.config import Settings
from tests.extraction.conftest import script
from tests.extraction.test_failures import FACTS_ONLY
from tests.fakes import FakeLLMServer

SAID = "2023-05-08T13:56:00+00:00"
IMPORTED = [
    {"role": "user", "content": "I went to a support group yesterday.", "timestamp": SAID},
    {"role": "assistant", "content": "How was it?", "timestamp": "2023-05-08T13:57:00"},
]


def facts_prompt(fake: FakeLLMServer) -> str:
    [request] = fake.requests
    return "\n".join(str(m.get("content", "")) for m in request["messages"])


def test_relative_dates_are_read_from_the_day_the_messages_were_said(
    mem: Memory, fake_llm: FakeLLMServer
) -> None:
    script(fake_llm, facts=["The user went to a support group on 2023-05-07"])
    result = mem.add_messages(IMPORTED, user_id="u", session_id="s", wait=True, **FACTS_ONLY)
    assert result.extraction.state == "done"
    assert "Today's date is 2023-05-08." in facts_prompt(fake_llm)
    [episode] = mem.list_episodes("s", user_id="u")[0]
    stamps = [m.timestamp.isoformat() if m.timestamp else None for m in episode.messages]
    assert stamps == [SAID, "2023-05-08T13:57:00+00:00"]  # naive times are UTC


def test_messages_without_a_time_are_read_as_said_when_added(
    mem: Memory, fake_llm: FakeLLMServer
) -> None:
    script(fake_llm, facts=[])
    mem.add_messages([{"content": "I went out yesterday."}], user_id="u", wait=True, **FACTS_ONLY)
    job = mem.list_jobs()[0]
    assert f"Today's date is {job.created_at.date().isoformat()}." in facts_prompt(fake_llm)


@pytest.mark.profiles("generic")
def test_the_v1_api_takes_and_returns_message_times(mem: Memory, fake_llm: FakeLLMServer) -> None:
    script(fake_llm, facts=[])
    app = create_app(Settings(), engine=mem)
    with TestClient(app, base_url="http://127.0.0.1") as http:
        body = {"messages": IMPORTED, "user_id": "u", "session_id": "s", **FACTS_ONLY}
        assert http.post("/v1/memories", json=body).status_code == 201
        mem.run_jobs()
        episodes = http.get("/v1/sessions/s/episodes", params={"user_id": "u"}).json()
        bad = {"messages": [{"content": "x", "timestamp": "last tuesday"}], "user_id": "u"}
        assert http.post("/v1/memories", json=bad).status_code == 422
    assert "Today's date is 2023-05-08." in facts_prompt(fake_llm)
    [episode] = episodes["items"]
    stamps = [m.get("timestamp") for m in episode["messages"]]
    assert stamps == [SAID, "2023-05-08T13:57:00+00:00"], json.dumps(episode)
