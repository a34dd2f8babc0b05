"""JiuwenMemory without an LLM, over real HTTP: nothing is extracted, so the stored turns are
the episodes: ``/search_memory/`` (hybrid search) and the page routes return them as
``episodic_memory``, and the add reply and ``/health`` say why nothing else appears. With an
LLM configured the extracted types take over and raw turns are not returned."""

from __future__ import annotations

from typing import Any

import httpx

from omoide.types import MemoryType
from tests.api.conftest import KEY, Running
from tests.compat.conftest import StartServer
from tests.fakes import FakeLLMServer

# The seed document's "Minimal Example", steps 2 and 3.
ADD = {
    "messages": [
        {"role": "user", "content": "I like jasmine tea"},
        {"role": "assistant", "content": "I will remember that you like jasmine tea."},
    ],
    "user_id": "user_001",
    "scope_id": "demo",
}
SEARCH = {
    "query": "What does the user like to drink?",
    "num": 5,
    "user_id": "user_001",
    "scope_id": "demo",
    "threshold": 0.3,
}
TENANT = {"user_id": "user_001", "scope_id": "demo"}


def _ok(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    return response.json()


def test_the_seed_example_finds_the_tea_without_an_llm(http: httpx.Client) -> None:
    added = _ok(http.post("/add_messages/", json=ADD))
    assert added["extraction"]["state"] == "disabled"
    reason = added["extraction"]["reason"]
    assert "API_BASE" in reason and "MODEL_NAME" in reason and "episodic_memory" in reason
    hits = _ok(http.post("/search_memory/", json=SEARCH))["results"]
    assert hits[0]["content"] == "I like jasmine tea"
    assert {h["type"] for h in hits} == {"episodic_memory"}
    assert all(1 >= h["score"] >= 0.3 for h in hits)
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)


def test_unrelated_turns_fall_below_the_threshold(http: httpx.Client) -> None:
    _ok(http.post("/add_messages/", json=ADD))
    chatter = [{"role": "user", "content": f"My cousin fixed bicycle number {i}"} for i in range(8)]
    # another session: a turn's neighbours are keyword context for it (so the first chatter
    # turn of the same session would match "like" through the tea turn before it)
    _ok(http.post("/add_messages/", json=TENANT | {"messages": chatter, "session_id": "other"}))
    hits = _ok(http.post("/search_memory/", json=SEARCH))["results"]
    assert "I like jasmine tea" in [h["content"] for h in hits[:2]]
    assert all("bicycle" not in h["content"] for h in hits)


def test_the_page_routes_list_the_turns_as_episodic_memory(http: httpx.Client) -> None:
    _ok(http.post("/add_messages/", json=ADD))
    for memory_type in ("UNKNOWN", "episodic_memory", "EPISODIC"):
        body = TENANT | {"memory_type": memory_type}
        page = _ok(http.post("/get_user_mem_by_page/", json=body))
        assert page["total"] == 2, memory_type
        assert {i["type"] for i in page["results"]} == {"episodic_memory"}
    semantic = TENANT | {"memory_type": "semantic_memory"}
    assert _ok(http.post("/get_user_mem_by_page/", json=semantic)) == {"results": [], "total": 0}
    summary = SEARCH | {"query": "What drink preferences has the user recently discussed?"}
    assert _ok(http.post("/search_user_history_summary/", json=summary)) == {"results": []}


def test_health_says_extraction_is_off_and_why(start_server: StartServer) -> None:
    keyed = start_server(api_key=KEY)
    with keyed.http(KEY) as http:
        llm = _ok(http.get("/health"))["llm"]
        assert llm["status"] == "disabled" and "LLM" in llm["reason"]
    with keyed.http() as anonymous:  # without the key: only the status
        assert _ok(anonymous.get("/health"))["llm"] == {"status": "disabled"}


def test_with_an_llm_raw_turns_are_not_returned(
    llm_server: Running, llm_http: httpx.Client, fake_llm: FakeLLMServer
) -> None:
    messages = [{"role": "user", "content": "I like jasmine tea"}]
    llm_server.engine.add(
        messages, user_id="user_001", scope_id="demo", session_id="s", infer=False
    )
    llm_server.engine.add(
        messages, user_id="user_001", scope_id="demo", type=MemoryType.SEMANTIC, infer=False
    )
    hits = _ok(llm_http.post("/search_memory/", json=SEARCH | {"threshold": 0}))["results"]
    assert [h["type"] for h in hits] == ["semantic_memory"]
    page = _ok(llm_http.post("/get_user_mem_by_page/", json=TENANT))
    assert [i["type"] for i in page["results"]] == ["semantic_memory"]
    fake_llm.enqueue('{"ok": true}')  # /health asks the LLM for real
    assert llm_http.get("/health").json()["llm"]["status"] == "ok"
