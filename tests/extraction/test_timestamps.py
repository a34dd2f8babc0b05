"""Issue 16, point 10: messages carry the time they were said, on every interface that takes
messages, stored on the episode; extraction reads relative dates from that day, not from the
day the history was imported."""

from __future__ import annotations

import json
from datetime import datetime

import pytest
from fastapi.testclient import TestClient

from omoide import Memory
from omoide.config import Settings
from omoide.serve.app import create_app
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
    app = create_app(Settings(), memory=mem)
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


def test_an_episode_time_dates_the_messages_without_their_own(
    mem: Memory, fake_llm: FakeLLMServer
) -> None:
    script(fake_llm, facts=[])
    messages = [
        {"role": "user", "content": "We adopted a cat last week."},
        {"role": "assistant", "content": "Congratulations!", "timestamp": "2023-06-02T09:00:00Z"},
    ]
    at = datetime(2023, 6, 1, 18, 30)  # naive: UTC
    mem.add_messages(messages, user_id="u", session_id="s", timestamp=at, wait=True, **FACTS_ONLY)
    assert "Today's date is 2023-06-02." in facts_prompt(fake_llm)  # the latest time given
    [episode] = mem.list_episodes("s", user_id="u")[0]
    stamps = [m.timestamp.isoformat() if m.timestamp else None for m in episode.messages]
    assert stamps == ["2023-06-01T18:30:00+00:00", "2023-06-02T09:00:00+00:00"]


NO_GRAPH = {"entities": [], "relationships": []}  # JiuwenMemory's add has no graph switch
ONLY_FACTS = {
    "enable_user_profile": False,
    "enable_episodic_memory": False,
    "enable_summary_memory": False,
}


@pytest.mark.profiles("generic")
def test_jiuwen_add_messages_reads_each_message_timestamp(
    mem: Memory, fake_llm: FakeLLMServer
) -> None:
    script(fake_llm, facts=["The user went to a support group on 2023-05-07"], graph=NO_GRAPH)
    app = create_app(Settings(), memory=mem)
    body = {
        "messages": [dict(m, timestamp=str(m["timestamp"])) for m in IMPORTED],
        "user_id": "u",
        **ONLY_FACTS,
    }
    with TestClient(app, base_url="http://127.0.0.1") as http:
        added = http.post("/add_messages/", json=body)
        assert added.status_code == 200, added.text
        assert added.json()["extraction"]["state"] == "done"
        bad = {"messages": [{"content": "x", "timestamp": "last tuesday"}], "user_id": "u"}
        refused = http.post("/add_messages/", json=bad)
        assert refused.status_code == 422 and "messages[0].timestamp" in refused.text
        whole = {"messages": [{"content": "I went out yesterday."}], "user_id": "v", **ONLY_FACTS}
        whole["timestamp"] = "2022-01-10T08:00:00Z"  # omoide's episode time, on this route too
        script(fake_llm, facts=[], graph=NO_GRAPH)
        assert http.post("/add_messages/", json=whole).json()["extraction"]["state"] == "done"
    prompts = [
        "\n".join(str(m.get("content", "")) for m in r["messages"]) for r in fake_llm.requests
    ]
    assert "Today's date is 2023-05-08." in prompts[0]
    assert "Today's date is 2022-01-10." in prompts[2]
