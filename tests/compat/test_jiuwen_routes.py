"""The JiuwenMemory routes newer than the seed (upstream ``memory_server.py`` and
``log_center_api.py``), over real HTTP: single and batch delete, the page with timestamps and
source ids, and the message log over the stored turns."""

from __future__ import annotations

import csv
import io
from datetime import datetime
from typing import Any

import httpx
import pytest

from omoide.types import HistoryEvent, MemoryType, SearchFilters
from tests.api.conftest import KEY, Running
from tests.compat.conftest import StartServer

D = "__default__"
TENANT = {"user_id": "u", "scope_id": "s"}
UNAUTHORIZED = "Unauthorized: invalid or missing API key"


def _ok(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    return response.json()


def _facts(server: Running, *texts: str, user: str = "u", scope: str = "s") -> list[str]:
    messages = [{"role": "user", "content": t} for t in texts]
    items = server.engine.add(
        messages, user_id=user, scope_id=scope, type=MemoryType.SEMANTIC, infer=False
    )
    return [i.id for i in items]


def _chat(http: httpx.Client, session: str, *turns: tuple[str, str], **tenant: str) -> None:
    messages = [{"role": role, "content": content} for role, content in turns]
    body = {"messages": messages, "session_id": session, **(tenant or TENANT)}
    _ok(http.post("/add_messages/", json=body))


# deletes -----------------------------------------------------------------------------------
def test_delete_mem_by_id(server: Running, http: httpx.Client) -> None:
    [keep, gone] = _facts(server, "kept", "deleted")
    reply = _ok(http.post("/delete_mem_by_id/", json={"mem_id": gone, **TENANT}))
    assert reply == {"status": "success", "message": f"Memory {gone} deleted successfully"}
    assert [m.id for m in server.engine.get_all(user_id="u", scope_id="s").items] == [keep]
    assert server.engine.history(gone, user_id="u", scope_id="s")[-1].event is HistoryEvent.DELETE
    again = http.post("/delete_mem_by_id/", json={"mem_id": gone, **TENANT})
    assert again.status_code == 404 and gone in again.json()["detail"]


def test_delete_mem_by_id_of_another_tenant_is_404(server: Running, http: httpx.Client) -> None:
    [bobs] = _facts(server, "bob's", user="bob")
    assert http.post("/delete_mem_by_id/", json={"mem_id": bobs, **TENANT}).status_code == 404
    assert server.engine.get(bobs, user_id="bob", scope_id="s").text == "bob's"


def test_delete_mem_by_id_of_a_variable(server: Running, http: httpx.Client) -> None:
    _ok(http.post("/update_variables/", json={"variables": {"city": "Shenzhen"}, **TENANT}))
    _ok(http.post("/delete_mem_by_id/", json={"mem_id": "var:city", **TENANT}))
    assert server.engine.get_variables(user_id="u", scope_id="s") == {}
    assert http.post("/delete_mem_by_id/", json={"mem_id": "var:city"}).status_code == 404


def test_batch_delete_mem(server: Running, http: httpx.Client) -> None:
    ids = _facts(server, "a", "b", "c")
    body = {"mem_ids": [ids[0], "nope", ids[1], ids[0]], **TENANT}
    reply = _ok(http.post("/batch_delete_mem/", json=body))
    assert reply["status"] == "success" and (reply["deleted"], reply["failed"]) == (2, 1)
    assert [e["mem_id"] for e in reply["errors"]] == ["nope"] and reply["errors"][0]["error"]
    assert [m.id for m in server.engine.get_all(user_id="u", scope_id="s").items] == [ids[2]]
    empty = _ok(http.post("/batch_delete_mem/", json={"mem_ids": [], **TENANT}))
    assert empty == {"status": "success", "deleted": 0, "failed": 0}  # upstream: no errors key
    missing = http.post("/batch_delete_mem/", json=TENANT)
    assert missing.status_code == 422 and missing.json()["detail"][0]["loc"] == ["body", "mem_ids"]


# the page with total -----------------------------------------------------------------------
def test_page_with_total_adds_timestamp_and_source_id(server: Running, http: httpx.Client) -> None:
    _chat(http, "chat-1", ("user", "I like jasmine tea"), ("assistant", "Noted."))
    _ok(http.post("/update_variables/", json={"variables": {"city": "Shenzhen"}, **TENANT}))
    body = {**TENANT, "page_size": 2}
    page = _ok(http.post("/get_user_mem_by_page_with_total/", json=body))
    assert page["total"] == 3 and len(page["results"]) == 2
    for item in page["results"]:
        assert set(item) == {"mem_id", "content", "type", "timestamp", "source_id"}
        assert datetime.fromisoformat(item["timestamp"]).tzinfo is not None
        assert item["source_id"] == item["mem_id"]  # a stored turn is its own message
        found = _ok(http.post("/get_message_by_id/", json={"message_id": item["source_id"]}))
        assert found == {"found": False, "message_id": item["source_id"]}  # other tenant
        found = _ok(http.post("/get_message_by_id/", json={"message_id": item["mem_id"], **TENANT}))
        assert found["found"] and found["content"] == item["content"]
    last = _ok(http.post("/get_user_mem_by_page_with_total/", json=body | {"page_idx": 2}))
    assert last["results"] == [
        {
            "mem_id": "var:city",
            "content": "city: Shenzhen",
            "type": "variable",
            "timestamp": None,
            "source_id": None,
        }
    ]


def test_the_plain_page_carries_timestamp_and_source_id_too(
    server: Running, http: httpx.Client
) -> None:
    """Upstream's own HTTP tests expect both keys on /get_user_mem_by_page/'s items."""
    _chat(http, "chat-1", ("user", "I like jasmine tea"), ("assistant", "Noted."))
    _ok(http.post("/update_variables/", json={"variables": {"city": "Shenzhen"}, **TENANT}))
    for page_idx in (1, 2):
        body = {**TENANT, "page_size": 2, "page_idx": page_idx}
        page = _ok(http.post("/get_user_mem_by_page/", json=body))
        timed = _ok(http.post("/get_user_mem_by_page_with_total/", json=body))
        assert page == timed and page["results"]
        for item in page["results"]:
            assert set(item) == {"mem_id", "content", "type", "timestamp", "source_id"}


# the message log ---------------------------------------------------------------------------
@pytest.fixture
def chats(server: Running, http: httpx.Client) -> Running:
    _chat(http, "s1", ("user", "I like jasmine tea"), ("assistant", "Noted."))
    _chat(http, "s2", ("user", "I live in Shenzhen"), ("assistant", "Nice city."))
    _chat(http, "s2", ("system", "be brief"))
    _chat(http, "s1", ("user", "someone else"), user_id="other", scope_id="s")
    return server


def test_get_message_by_id(chats: Running, http: httpx.Client) -> None:
    turn = chats.engine.get_all(user_id="u", scope_id="s", filters=_raw("s1")).items[-1]
    found = _ok(http.post("/get_message_by_id/", json={"message_id": turn.id, **TENANT}))
    assert found == {
        "found": True,
        "message_id": turn.id,
        "role": "user",
        "content": "I like jasmine tea",
        "timestamp": turn.created_at.isoformat(),
    }
    [episode] = chats.engine.list_episodes("s1", user_id="u", scope_id="s")[0]
    whole = _ok(http.post("/get_message_by_id/", json={"message_id": episode.id, **TENANT}))
    assert whole["found"] and whole["role"] == "user"
    assert whole["content"] == "user: I like jasmine tea\nassistant: Noted."
    missing = _ok(http.post("/get_message_by_id/", json={"message_id": "nope", **TENANT}))
    assert missing == {"found": False, "message_id": "nope"}


def _raw(session: str | None = None) -> SearchFilters:
    return SearchFilters(types=[MemoryType.RAW], session_id=session)


def test_query_messages_pages_newest_first(chats: Running, http: httpx.Client) -> None:
    page = _ok(http.post("/admin/messages/query", json={**TENANT, "page_size": 2}))
    assert (page["total"], page["page_idx"], page["page_size"]) == (5, 1, 2)
    assert [i["content"] for i in page["items"]] == ["be brief", "Nice city."]
    item = page["items"][0]
    assert set(item) == {
        "message_id", "user_id", "scope_id", "session_id", "role", "content", "timestamp"
    }  # fmt: skip
    assert (item["user_id"], item["scope_id"], item["session_id"], item["role"]) == (
        "u", "s", "s2", "system"
    )  # fmt: skip
    third = _ok(http.post("/admin/messages/query", json={**TENANT, "page_size": 2, "page_idx": 3}))
    assert [i["content"] for i in third["items"]] == ["I like jasmine tea"]
    s1 = _ok(http.post("/admin/messages/query", json={**TENANT, "session_id": "s1"}))
    assert s1["total"] == 2 and {i["session_id"] for i in s1["items"]} == {"s1"}
    clamped = _ok(http.post("/admin/messages/query", json={**TENANT, "page_size": 500}))
    assert clamped["page_size"] == 200 and len(clamped["items"]) == 5
    future = {**TENANT, "start_time": "2999-01-01T00:00:00"}
    assert _ok(http.post("/admin/messages/query", json=future))["total"] == 0
    past = {**TENANT, "end_time": "2000-01-01T00:00:00Z"}
    assert _ok(http.post("/admin/messages/query", json=past))["total"] == 0
    excluded = _ok(http.post("/admin/messages/query", json={**TENANT, "exclude_scopes": ["s"]}))
    assert excluded["total"] == 0
    bad_time = http.post("/admin/messages/query", json={**TENANT, "start_time": "soon"})
    assert bad_time.status_code == 422
    assert bad_time.json()["detail"][0]["loc"] == ["body", "start_time"]  # FastAPI's body


def test_message_stats(chats: Running, http: httpx.Client) -> None:
    stats = _ok(http.get("/admin/messages/stats", params=TENANT))
    assert stats == {"total": 5, "by_role": {"user": 2, "assistant": 2, "system": 1}}
    s1 = _ok(http.get("/admin/messages/stats", params=TENANT | {"session_id": "s1"}))
    assert s1 == {"total": 2, "by_role": {"user": 1, "assistant": 1}}
    assert _ok(http.get("/admin/messages/stats")) == {"total": 0, "by_role": {}}


def test_export_messages_as_csv_oldest_first(chats: Running, http: httpx.Client) -> None:
    response = http.get("/admin/messages/export", params=TENANT)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/csv")
    assert "messages_export.csv" in response.headers["content-disposition"]
    rows = list(csv.reader(io.StringIO(response.text)))
    assert rows[0] == [
        "message_id", "user_id", "scope_id", "session_id", "role", "timestamp", "content"
    ]  # fmt: skip
    assert [r[6] for r in rows[1:]] == [
        "I like jasmine tea", "Noted.", "I live in Shenzhen", "Nice city.", "be brief"
    ]  # fmt: skip
    bad = http.get("/admin/messages/export", params=TENANT | {"limit": "many"})
    assert bad.status_code == 422 and bad.json()["detail"][0]["loc"] == ["query", "limit"]
    two = http.get("/admin/messages/export", params=TENANT | {"limit": 2})
    assert [r[6] for r in list(csv.reader(io.StringIO(two.text)))[1:]] == [
        "I like jasmine tea",
        "Noted.",
    ]


def test_message_detail(chats: Running, http: httpx.Client) -> None:
    turn = chats.engine.get_all(user_id="u", scope_id="s", filters=_raw("s2")).items[0]
    detail = _ok(http.get(f"/admin/messages/detail/{turn.id}", params=TENANT))
    assert detail["message_id"] == turn.id and detail["content"] == "be brief"
    assert (detail["session_id"], detail["role"]) == ("s2", "system")
    missing = http.get("/admin/messages/detail/nope", params=TENANT)
    assert missing.status_code == 404 and missing.json()["detail"] == "message nope not found"
    [fact] = _facts(chats, "not a message")
    assert http.get(f"/admin/messages/detail/{fact}", params=TENANT).status_code == 404


# authentication and tenants ----------------------------------------------------------------
NEW_POSTS: dict[str, dict[str, Any]] = {
    "/delete_mem_by_id/": {"mem_id": "x"},
    "/batch_delete_mem/": {"mem_ids": []},
    "/get_user_mem_by_page_with_total/": {},
    "/get_message_by_id/": {"message_id": "x"},
    "/admin/messages/query": {},
}
NEW_GETS = ["/admin/messages/stats", "/admin/messages/export", "/admin/messages/detail/x"]


def test_every_new_route_needs_the_key_reads_included(start_server: StartServer) -> None:
    keyed = start_server(api_key=KEY)
    with httpx.Client(base_url=keyed.url, timeout=60) as http:
        for path, body in NEW_POSTS.items():
            denied = http.post(path, json=body)
            assert denied.status_code == 401 and denied.json()["detail"] == UNAUTHORIZED, path
            allowed = http.post(path, json=body, headers={"Authorization": f"Bearer {KEY}"})
            assert allowed.status_code in (200, 404), (path, allowed.text)
        for path in NEW_GETS:
            assert http.get(path).status_code == 401, path
            allowed = http.get(path, headers={"Authorization": f"Bearer {KEY}"})
            assert allowed.status_code in (200, 404), path


def test_a_bound_key_reaches_only_its_tenant_on_the_new_routes(
    start_server: StartServer,
) -> None:
    keyed = start_server(api_key=KEY, tenant_keys={"bob-key": {"user_id": "bob"}})
    [alices] = _facts(keyed, "alice's", user="alice", scope=D)
    with keyed.http("bob-key") as bob:
        _chat(bob, "s1", ("user", "bob talks"), scope_id=D)
        for path, body in NEW_POSTS.items():
            other = bob.post(path, json=body | {"user_id": "alice"})
            assert other.status_code == 403, path
        for path in NEW_GETS:
            assert bob.get(path, params={"user_id": "alice"}).status_code == 403, path
        assert bob.post("/delete_mem_by_id/", json={"mem_id": alices}).status_code == 404
        stats = _ok(bob.get("/admin/messages/stats"))
        assert stats == {"total": 1, "by_role": {"user": 1}}
    assert keyed.engine.get(alices, user_id="alice", scope_id=D).text == "alice's"


def test_root_lists_the_jiuwen_routes_in_upstreams_format(http: httpx.Client) -> None:
    root = _ok(http.get("/"))
    # omoide serve's root names omoide (memory-server's keeps upstream's message:
    # tests/compat/test_memory_server.py)
    assert root["message"].startswith("omoide")
    expected = [
        "POST /add_messages/",
        "POST /update_mem_by_id/",
        "POST /delete_mem_by_id/",
        "POST /batch_delete_mem/",
        "POST /update_variables/",
        "POST /delete_variables/",
        "POST /delete_mem_by_scope/",
        "POST /get_variables/",
        "POST /search_memory/",
        "POST /search_user_history_summary/",
        "POST /get_user_mem_by_page/",
        "POST /get_user_mem_by_page_with_total/",
        "POST /get_message_by_id/",
        "POST /admin/messages/query",
        "GET /admin/messages/stats",
        "GET /admin/messages/export",
        "GET /admin/messages/detail/{msg_id}",
        "GET /health",
    ]
    listed = root["endpoints"]
    assert all(isinstance(e, str) for e in listed)
    assert set(expected) <= set(listed)
    jiuwen = [e for e in listed if e in expected[:-1]]
    assert jiuwen == expected[:-1]  # in upstream's order
