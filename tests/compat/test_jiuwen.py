"""The JiuwenMemory ``memory_server`` interface, driven over real HTTP with the request bodies of
its documentation (copied here as they stand), asserting the documented response shapes.
Search and paging: test_jiuwen_search.py; upstream's newer wire behaviour and routes:
test_jiuwen_wire.py, test_jiuwen_routes.py; the no-LLM mode: test_jiuwen_offline.py."""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import httpx
import pytest

from omoide.types import MemoryType
from tests.api.conftest import KEY, Running
from tests.compat.conftest import StartServer
from tests.extraction.conftest import GRAPH, script
from tests.fakes import FakeLLMServer

# The seed document's request bodies -------------------------------------------------------
ADD_BASIC = {
    "messages": [
        {"role": "user", "content": "I like jasmine tea"},
        {"role": "assistant", "content": "Got it, I will remember your preference."},
    ],
    "user_id": "user_001",
    "scope_id": "demo",
}
ADD_WITH_VARIABLES: dict[str, Any] = {
    "messages": [
        {"role": "user", "content": "I like jasmine tea and live in Shenzhen"},
        {"role": "assistant", "content": "Noted."},
    ],
    "user_id": "user_001",
    "scope_id": "demo",
    "mem_variables": [
        {"name": "favorite_drink", "description": "The user's favorite drink"},
        {
            "name": "city",
            "description": "The city where the user lives",
            "type": "string",
            "required": False,
        },
    ],
    "enable_user_profile": True,
    "enable_summary_memory": False,
}
UPDATE_MEM = {
    "mem_id": "mem_123",
    "memory": "The user likes jasmine tea",
    "user_id": "user_001",
    "scope_id": "demo",
}
UPDATE_VARIABLES = {
    "variables": {"favorite_drink": "jasmine tea", "city": "Shenzhen"},
    "user_id": "user_001",
    "scope_id": "demo",
}
DELETE_VARIABLES = {"names": ["favorite_drink", "city"], "user_id": "user_001", "scope_id": "demo"}
DELETE_SCOPE = {"scope_id": "demo"}
GET_VARIABLES = {"names": ["favorite_drink"], "user_id": "user_001", "scope_id": "demo"}
SEARCH_MEMORY = {
    "query": "What tea does the user like?",
    "num": 5,
    "user_id": "user_001",
    "scope_id": "demo",
    "threshold": 0.3,
}
SEARCH_SUMMARY = {
    "query": "What drink preferences has the user recently discussed?",
    "num": 5,
    "user_id": "user_001",
    "scope_id": "demo",
    "threshold": 0.3,
}
PAGE = {
    "user_id": "user_001",
    "scope_id": "demo",
    "page_size": 10,
    "page_idx": 1,
    "memory_type": "UNKNOWN",
}
MINIMAL_ADD = {
    "messages": [
        {"role": "user", "content": "I like jasmine tea"},
        {"role": "assistant", "content": "I will remember that you like jasmine tea."},
    ],
    "user_id": "user_001",
    "scope_id": "demo",
}
MINIMAL_SEARCH = {
    "query": "What does the user like to drink?",
    "num": 5,
    "user_id": "user_001",
    "scope_id": "demo",
    "threshold": 0.3,
}

ENDPOINTS: dict[str, dict[str, Any]] = {
    "/add_messages/": ADD_BASIC,
    "/update_mem_by_id/": UPDATE_MEM,
    "/update_variables/": UPDATE_VARIABLES,
    "/delete_variables/": DELETE_VARIABLES,
    "/delete_mem_by_scope/": DELETE_SCOPE,
    "/get_variables/": GET_VARIABLES,
    "/search_memory/": SEARCH_MEMORY,
    "/search_user_history_summary/": SEARCH_SUMMARY,
    "/get_user_mem_by_page/": PAGE,
}
PREFIXES = {
    "/add_messages/": "Error adding messages",
    "/update_mem_by_id/": "Error updating memory",
    "/update_variables/": "Error updating variables",
    "/delete_variables/": "Error deleting variables",
    "/delete_mem_by_scope/": "Error deleting memory by scope",
    "/get_variables/": "Error getting variables",
    "/search_memory/": "Error searching memory",
    "/search_user_history_summary/": "Error searching user history summary",
    "/get_user_mem_by_page/": "Error getting user memory by page",
}
SUCCESS = {"status": "success"}
UNAUTHORIZED = "Unauthorized: invalid or missing API key"
TEA = {
    MemoryType.SEMANTIC: "The user likes jasmine tea",
    MemoryType.USER_PROFILE: "favorite drink: jasmine tea",
    MemoryType.EPISODIC: "user: I drink jasmine tea every morning\nassistant: Lovely.",
    MemoryType.SUMMARY: "The user recently mentioned that they like jasmine tea.",
    MemoryType.RAW: "I like jasmine tea",
}


def _store(
    server: Running, type_: MemoryType, *texts: str, user: str = "user_001", scope: str = "demo"
) -> list[str]:
    """Memories of one type written through the engine (never extracted from)."""
    items = server.engine.add(
        [{"role": "user", "content": t} for t in texts],
        user_id=user,
        scope_id=scope,
        type=type_,
        infer=False,
    )
    return [i.id for i in items]


def _ok(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    return response.json()


# service routes ----------------------------------------------------------------------------
def test_root_and_health_carry_the_seed_fields(http: httpx.Client) -> None:
    root = _ok(http.get("/"))
    # omoide serve's root names omoide (memory-server's keeps upstream's message:
    # tests/compat/test_memory_server.py)
    assert root["message"].startswith("omoide")
    listed = set(root["endpoints"])
    assert {f"POST {path}" for path in ENDPOINTS} | {"GET /health"} <= listed
    health = _ok(http.get("/health"))
    assert health["message"] == "Memory Engine API is running"
    assert health["status"] == "healthy" and health["store"]["status"] == "ok"


def test_the_interface_can_be_switched_off(start_server: StartServer) -> None:
    off = start_server(compat_jiuwen=False)
    with off.http() as http:
        assert http.post("/search_memory/", json=SEARCH_MEMORY).status_code == 404
        assert all("add_messages" not in e for e in http.get("/").json()["endpoints"])


# /add_messages/ ----------------------------------------------------------------------------
@pytest.mark.parametrize("body", [ADD_BASIC, ADD_WITH_VARIABLES, MINIMAL_ADD])
def test_add_messages_without_an_llm_stores_the_messages(
    server: Running, http: httpx.Client, body: dict[str, Any]
) -> None:
    reply = _ok(http.post("/add_messages/", json=body))
    assert reply["status"] == "success" and reply["message"] == "Messages added successfully"
    assert reply["extraction"]["state"] == "disabled" and "LLM" in reply["extraction"]["reason"]
    stored = server.engine.get_all(user_id="user_001", scope_id="demo")
    assert sorted(m.text for m in stored.items) == sorted(m["content"] for m in body["messages"])
    assert {(m.type, m.session_id) for m in stored.items} == {(MemoryType.RAW, "__default__")}
    assert {m.metadata["role"] for m in stored.items} == {"user", "assistant"}


def test_add_messages_defaults(server: Running, http: httpx.Client) -> None:
    messages = [{"content": "no role given"}, {"role": "user", "content": "   "}, {"role": ""}]
    assert _ok(http.post("/add_messages/", json={"messages": messages}))["status"] == "success"
    # upstream's "__default__" is omoide's default tenant: the one /v1, MCP and the CLI use
    stored = server.engine.get_all(user_id="default", scope_id="default")
    assert [(m.text, m.metadata["role"]) for m in stored.items] == [("no role given", "user")]


# /update_mem_by_id/ ------------------------------------------------------------------------
def test_update_mem_by_id(server: Running, http: httpx.Client) -> None:
    [mem_id] = _store(server, MemoryType.SEMANTIC, "The user likes green tea")
    body = UPDATE_MEM | {"mem_id": mem_id}
    reply = _ok(http.post("/update_mem_by_id/", json=body))
    assert reply == SUCCESS | {"message": f"Memory {mem_id} updated successfully"}
    updated = server.engine.get(mem_id, user_id="user_001", scope_id="demo")
    assert updated.text == "The user likes jasmine tea"
    assert [
        h.event for h in server.engine.history(mem_id, user_id="user_001", scope_id="demo")
    ] == [
        "ADD",
        "UPDATE",
    ]


def test_update_mem_by_id_of_an_unknown_or_foreign_id_is_404(
    server: Running, http: httpx.Client
) -> None:
    missing = http.post("/update_mem_by_id/", json=UPDATE_MEM)  # the seed's "mem_123"
    assert missing.status_code == 404 and "mem_123" in missing.json()["detail"]
    [mem_id] = _store(server, MemoryType.SEMANTIC, "bob's fact", user="bob")
    foreign = http.post("/update_mem_by_id/", json=UPDATE_MEM | {"mem_id": mem_id})
    assert foreign.status_code == 404
    assert server.engine.get(mem_id, user_id="bob", scope_id="demo").text == "bob's fact"


def test_update_mem_by_id_of_a_listed_variable(http: httpx.Client) -> None:
    _ok(http.post("/update_variables/", json=UPDATE_VARIABLES))
    body = UPDATE_MEM | {"mem_id": "var:city", "memory": "Guangzhou"}
    assert _ok(http.post("/update_mem_by_id/", json=body))["status"] == "success"
    got = _ok(http.post("/get_variables/", json=GET_VARIABLES | {"names": ["city"]}))
    assert got == {"variables": {"city": "Guangzhou"}}
    unknown = http.post("/update_mem_by_id/", json=body | {"mem_id": "var:nope"})
    assert unknown.status_code == 404


# variables ---------------------------------------------------------------------------------
def test_variables_update_get_delete(http: httpx.Client) -> None:
    reply = _ok(http.post("/update_variables/", json=UPDATE_VARIABLES))
    assert reply == SUCCESS | {"message": "Variables updated successfully"}
    assert _ok(http.post("/get_variables/", json=GET_VARIABLES)) == {
        "variables": {"favorite_drink": "jasmine tea"}
    }
    everything = _ok(http.post("/get_variables/", json={"user_id": "user_001", "scope_id": "demo"}))
    assert everything == {"variables": UPDATE_VARIABLES["variables"]}
    assert _ok(http.post("/get_variables/", json={})) == {"variables": {}}  # tenant "default"
    deleted = _ok(http.post("/delete_variables/", json=DELETE_VARIABLES))
    assert deleted == SUCCESS | {"deleted": ["favorite_drink", "city"]}
    again = _ok(http.post("/delete_variables/", json=DELETE_VARIABLES))
    assert again == SUCCESS | {"deleted": []}
    assert _ok(http.post("/get_variables/", json=GET_VARIABLES)) == {"variables": {}}


def test_variables_keep_their_type(http: httpx.Client) -> None:
    body = {"variables": {"age": 41, "vip": True}, "user_id": "u"}
    _ok(http.post("/update_variables/", json=body))
    _ok(http.post("/update_variables/", json={"variables": {"age": "42"}, "user_id": "u"}))
    got = _ok(http.post("/get_variables/", json={"user_id": "u"}))
    assert got == {"variables": {"age": 42, "vip": True}}
    bad = http.post("/update_variables/", json={"variables": {"age": "old"}, "user_id": "u"})
    assert bad.status_code == 422 and "age" in bad.json()["detail"]


# /delete_mem_by_scope/ ---------------------------------------------------------------------
def _populate(server: Running) -> None:
    for user in ("user_001", "bob"):
        for scope in ("demo", "other"):
            _store(
                server, MemoryType.SEMANTIC, f"{user} in {scope}", "second", user=user, scope=scope
            )
            server.engine.update_variables({"city": "Shenzhen"}, user_id=user, scope_id=scope)


def _count(server: Running, user: str, scope: str) -> int:
    return server.engine.get_all(user_id=user, scope_id=scope).total


def test_delete_mem_by_scope_of_one_user(server: Running, http: httpx.Client) -> None:
    _populate(server)
    reply = _ok(http.post("/delete_mem_by_scope/", json={"scope_id": "demo", "user_id": "bob"}))
    assert reply == SUCCESS | {"deleted": 2}
    assert _count(server, "bob", "demo") == 0
    assert server.engine.get_variables(user_id="bob", scope_id="demo") == {}
    assert [_count(server, *t) for t in (("bob", "other"), ("user_001", "demo"))] == [2, 2]


def test_delete_mem_by_scope_of_every_user(server: Running, http: httpx.Client) -> None:
    """Needs ``ScopesMixin`` (omoide/engine/scopes.py) among ``Engine``'s bases."""
    _populate(server)
    reply = _ok(http.post("/delete_mem_by_scope/", json=DELETE_SCOPE))
    assert reply == SUCCESS | {"deleted": 4}
    assert [_count(server, u, "demo") for u in ("user_001", "bob")] == [0, 0]
    assert [_count(server, u, "other") for u in ("user_001", "bob")] == [2, 2]
    assert server.engine.get_variables(user_id="bob", scope_id="other") == {"city": "Shenzhen"}


# authentication ----------------------------------------------------------------------------
def test_every_endpoint_needs_the_key_when_one_is_set(start_server: StartServer) -> None:
    keyed = start_server(api_key=KEY)
    with httpx.Client(base_url=keyed.url, timeout=60) as http:
        for path, body in ENDPOINTS.items():
            for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": KEY}):
                denied = http.post(path, json=body, headers=headers)
                assert denied.status_code == 401, (path, headers)
                assert denied.json()["detail"] == UNAUTHORIZED
            allowed = http.post(path, json=body, headers={"Authorization": f"Bearer {KEY}"})
            assert allowed.status_code != 401, path
        assert http.get("/health").status_code == 200 and http.get("/").status_code == 200


def test_a_bound_key_stays_in_its_tenant(start_server: StartServer) -> None:
    keyed = start_server(api_key=KEY, tenant_keys={"bob-key": {"user_id": "bob"}})
    _populate(keyed)
    with keyed.http("bob-key") as bob:
        page = _ok(bob.post("/get_user_mem_by_page/", json={"scope_id": "demo"}))
        assert page["total"] == 3  # two memories and a variable
        assert bob.post("/search_memory/", json=SEARCH_MEMORY).status_code == 403
        assert _ok(bob.post("/delete_mem_by_scope/", json=DELETE_SCOPE)) == SUCCESS | {"deleted": 2}
    assert [_count(keyed, "bob", "demo"), _count(keyed, "user_001", "demo")] == [0, 2]


# validation --------------------------------------------------------------------------------
@pytest.mark.parametrize("path", list(ENDPOINTS))
def test_unknown_fields_are_ignored_as_upstream(http: httpx.Client, path: str) -> None:
    body = ENDPOINTS[path] | {"usr_id": "typo", "session_id": "s1", "trace": {"a": 1}}
    response = http.post(path, json=body)
    expected = 404 if path == "/update_mem_by_id/" else 200  # the seed's "mem_123" is unknown
    assert response.status_code == expected, response.text


@pytest.mark.parametrize(
    "variable",
    [
        {"name": "tags", "description": "Tags", "type": "array"},
        {"name": "address", "description": "Address", "type": "object"},
        {"name": "birthday", "description": "Birthday", "type": "date"},
        {"name": "city", "description": "City", "type": "STRING"},  # exact, as upstream
        {"name": "vip", "description": "VIP", "type": " boolean"},
        {"name": " ", "description": "blank"},
        {"name": "age", "description": "Age", "type": "integer", "default": "old"},
        {"name": "city", "descripton": "typo"},
        {"name": "city"},
    ],
)
def test_bad_mem_variables_are_422(
    server: Running, http: httpx.Client, variable: dict[str, Any]
) -> None:
    body = copy.deepcopy(ADD_WITH_VARIABLES)
    body["mem_variables"].append(variable)
    response = http.post("/add_messages/", json=body)
    assert response.status_code == 422, response.text
    detail = response.json()["detail"]  # FastAPI's standard body, as upstream
    assert isinstance(detail, list) and detail
    assert all(e["loc"][:2] == ["body", "mem_variables"] for e in detail), detail
    assert all({"loc", "msg", "type"} <= set(e) for e in detail)
    assert server.engine.get_all(user_id="user_001", scope_id="demo").total == 0


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/add_messages/", {"user_id": "u"}),
        ("/add_messages/", {"messages": [{"role": "user", "content": 5}]}),
        ("/update_variables/", {"variables": {"tags": ["a", "b"]}}),
        ("/update_variables/", {"variables": {"address": {"city": "Shenzhen"}}}),
        ("/search_memory/", {"query": "tea", "num": 0}),
        ("/search_memory/", {"num": 5}),
        ("/delete_mem_by_scope/", {}),
        ("/get_user_mem_by_page/", {"page_idx": 0}),
    ],
)
def test_invalid_bodies_are_422(http: httpx.Client, path: str, body: dict[str, Any]) -> None:
    response = http.post(path, json=body)
    assert response.status_code == 422, response.text


# failures ----------------------------------------------------------------------------------
def test_failures_are_500_with_the_documented_prefix(
    start_server: StartServer, tmp_path: Path
) -> None:
    broken = start_server(workers=0)
    broken.engine.store.close()  # every connection closed, and the file gone: nothing works
    for name in os.listdir(tmp_path):
        if name.startswith("jiuwen-"):
            os.remove(tmp_path / name)
    bodies = ENDPOINTS | {"/delete_mem_by_scope/": DELETE_SCOPE | {"user_id": "user_001"}}
    with broken.http() as http:
        for path, body in bodies.items():
            response = http.post(path, json=body)
            assert response.status_code == 500, (path, response.text)
            detail = response.json()["detail"]
            assert response.json()["error"] == {"code": "internal_error", "message": detail}
            assert (
                detail.startswith(f"{PREFIXES[path]}: ") and len(detail) > len(PREFIXES[path]) + 2
            )
            # the exception's own text (SQL, paths) stays in the server log
            assert str(tmp_path) not in detail and "database" not in detail.lower(), detail


# extraction with an LLM --------------------------------------------------------------------
def test_add_messages_extracts_variables_and_memories(
    start_server: StartServer, fake_llm: FakeLLMServer
) -> None:
    server = start_server(llm=fake_llm)
    script(
        fake_llm,
        variables={"favorite_drink": "jasmine tea", "city": "Shenzhen"},
        facts=["The user likes jasmine tea", "The user lives in Shenzhen"],
        profile={"favorite drink": "jasmine tea", "city": "Shenzhen"},
        graph=GRAPH,
    )
    with server.http() as http:
        added = _ok(http.post("/add_messages/", json=ADD_WITH_VARIABLES))
        assert added["status"] == "success" and added["message"] == "Messages added successfully"
        assert added["extraction"]["state"] == "done"
        assert "summary" not in added["extraction"]["steps"]
        got = _ok(http.post("/get_variables/", json={"user_id": "user_001", "scope_id": "demo"}))
        assert got == {"variables": {"favorite_drink": "jasmine tea", "city": "Shenzhen"}}
        hits = _ok(http.post("/search_memory/", json=SEARCH_MEMORY))["results"]
        assert "The user likes jasmine tea" in [h["content"] for h in hits]
        page = _ok(http.post("/get_user_mem_by_page/", json=PAGE | {"page_size": 20}))
        types = [item["type"] for item in page["results"]]
        assert sorted(set(types)) == [
            "episodic_memory",
            "semantic_memory",
            "user_profile",
            "variable",
        ]
        assert page["total"] == len(types) == 1 + 2 + 2 + 2
    assert len(fake_llm.requests) == 4  # variables, facts, profile, graph: no summary


def test_switches_choose_what_is_extracted(
    start_server: StartServer, fake_llm: FakeLLMServer
) -> None:
    server = start_server(llm=fake_llm)
    script(fake_llm, summary="The user said they like jasmine tea.", graph=GRAPH)
    body = ADD_BASIC | {"enable_semantic_memory": False, "enable_user_profile": False}
    with server.http() as http:
        assert _ok(http.post("/add_messages/", json=body))["extraction"]["state"] == "done"
        hits = _ok(http.post("/search_user_history_summary/", json=SEARCH_SUMMARY))["results"]
        assert [(h["type"], h["content"]) for h in hits] == [
            ("summary", "The user said they like jasmine tea.")
        ]
        off = ADD_BASIC | {"enable_long_term_mem": False}
        assert _ok(http.post("/add_messages/", json=off))["extraction"]["state"] == "off"
    assert len(fake_llm.requests) == 2
