"""Upstream's wire behaviour on the JiuwenMemory routes (openJiuwen-ai/agent-memory
``jiuwen_memory/server/memory_server.py``), over real HTTP: defaults, ignored fields, the
strict ``MemVariable``, empty messages, ``threshold: null``, ``page_size`` clamping and
FastAPI's standard 422 body."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from omoide.store.protocol import NewMemory
from omoide.types import MemoryType
from tests.api.conftest import KEY, Running
from tests.compat.conftest import StartServer

D = "__default__"
# upstream's "__default__" is omoide's default tenant on the wire: it is stored as "default", the
# tenant /v1, MCP and the CLI use when none is named (sessions keep the name "__default__")
STORED = "default"


def _ok(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    return response.json()


def _facts(server: Running, *texts: str, user: str = STORED, scope: str = STORED) -> list[str]:
    messages = [{"role": "user", "content": t} for t in texts]
    items = server.engine.add(
        messages, user_id=user, scope_id=scope, type=MemoryType.SEMANTIC, infer=False
    )
    return [i.id for i in items]


# defaults and session_id -------------------------------------------------------------------
def test_session_id_names_the_session_and_defaults_to___default__(
    server: Running, http: httpx.Client
) -> None:
    one = {"messages": [{"role": "user", "content": "first"}], "session_id": "chat-1"}
    _ok(http.post("/add_messages/", json=one | {"user_id": "u", "scope_id": "s"}))
    _ok(http.post("/add_messages/", json={"messages": [{"content": "second"}]}))
    got = server.engine.get_all(user_id="u", scope_id="s").items
    assert [(m.text, m.session_id) for m in got] == [("first", "chat-1")]
    assert server.engine.get_session("chat-1", user_id="u", scope_id="s").id == "chat-1"
    default = server.engine.get_all(user_id=STORED, scope_id=STORED).items
    assert [(m.text, m.session_id) for m in default] == [("second", D)]


def test_omitted_ids_are___default___on_every_route(server: Running, http: httpx.Client) -> None:
    [mem_id] = _facts(server, "a fact of the default tenant")
    _ok(http.post("/update_variables/", json={"variables": {"city": "Shenzhen"}}))
    assert server.engine.get_variables(user_id=STORED, scope_id=STORED) == {"city": "Shenzhen"}
    assert _ok(http.post("/get_variables/", json={})) == {"variables": {"city": "Shenzhen"}}
    page = _ok(http.post("/get_user_mem_by_page/", json={}))
    assert page["total"] == 2
    _ok(http.post("/update_mem_by_id/", json={"mem_id": mem_id, "memory": "changed"}))
    assert server.engine.get(mem_id, user_id=STORED, scope_id=STORED).text == "changed"
    _ok(http.post("/delete_mem_by_id/", json={"mem_id": mem_id}))
    assert server.engine.get_all(user_id=STORED, scope_id=STORED).total == 0
    assert _ok(http.post("/delete_variables/", json={"names": ["city"]}))["deleted"] == ["city"]


def test_a_bound_key_still_fills_in_its_own_tenant(start_server: StartServer) -> None:
    keyed = start_server(api_key=KEY, tenant_keys={"bob-key": {"user_id": "bob"}})
    with keyed.http("bob-key") as bob:
        _ok(bob.post("/add_messages/", json={"messages": [{"content": "bob was here"}]}))
        assert bob.post("/get_variables/", json={"user_id": "eve"}).status_code == 403
    assert [m.text for m in keyed.engine.get_all(user_id="bob", scope_id=STORED).items] == [
        "bob was here"
    ]


# request bodies ----------------------------------------------------------------------------
def test_an_empty_message_list_is_a_200_that_stores_nothing(
    server: Running, http: httpx.Client
) -> None:
    reply = _ok(http.post("/add_messages/", json={"messages": [], "user_id": "u"}))
    assert reply["status"] == "success" and reply["message"] == "Messages added successfully"
    assert reply["extraction"]["state"] == "off"
    assert server.engine.get_all(user_id="u", scope_id=STORED).total == 0


@pytest.mark.parametrize(
    "messages",
    [[{"role": "user"}], [{"role": "assistant", "content": ""}], [{"content": "  "}, {}]],
)
def test_messages_that_all_lack_content_are_a_422_that_stores_nothing(
    server: Running, http: httpx.Client, messages: list[dict[str, str]]
) -> None:
    """Upstream drops the messages without content and refuses a batch left with none (its
    own test: a lone ``{"role": "user"}`` is a 422 that never reaches the engine)."""
    reply = http.post("/add_messages/", json={"messages": messages, "user_id": "u"})
    assert reply.status_code == 422, reply.text
    assert "content" in reply.json()["detail"]
    assert server.engine.get_all(user_id="u", scope_id=STORED).total == 0


def test_a_message_without_content_next_to_others_is_skipped(
    server: Running, http: httpx.Client
) -> None:
    body = {"messages": [{"role": "user"}, {"role": "user", "content": "kept"}], "user_id": "u"}
    _ok(http.post("/add_messages/", json=body))
    assert [m.text for m in server.engine.get_all(user_id="u", scope_id=STORED).items] == ["kept"]


def test_mem_variables_forbid_unknown_fields_while_the_request_ignores_them(
    http: httpx.Client,
) -> None:
    variable = {"name": "city", "description": "Where the user lives"}
    body = {"messages": [{"content": "hi"}], "mem_variables": [variable], "client_version": 3}
    assert http.post("/add_messages/", json=body).status_code == 200
    typo = body | {"mem_variables": [variable | {"requried": False}]}
    bad = http.post("/add_messages/", json=typo)
    assert bad.status_code == 422
    [error] = bad.json()["detail"]
    assert error["loc"] == ["body", "mem_variables", 0, "requried"]
    assert error["type"] == "extra_forbidden"


@pytest.mark.parametrize("type_", ["string", "boolean", "integer", "number"])
def test_each_simple_variable_type_is_accepted(http: httpx.Client, type_: str) -> None:
    variable = {"name": "v", "description": "a value", "type": type_}
    body = {"messages": [{"content": "hi"}], "mem_variables": [variable]}
    assert http.post("/add_messages/", json=body).status_code == 200


def test_validation_errors_have_fastapis_standard_body(http: httpx.Client) -> None:
    response = http.post("/search_memory/", json={"num": 5})
    assert response.status_code == 422
    body = response.json()
    assert set(body) == {"detail"}
    [error] = body["detail"]
    assert error["loc"] == ["body", "query"] and error["type"] == "missing"
    assert error["msg"] == "Field required"
    not_json = http.post(
        "/search_memory/", content=b"{", headers={"Content-Type": "application/json"}
    )
    assert not_json.status_code == 422 and not_json.json()["detail"][0]["type"] == "json_invalid"


# threshold and page_size -------------------------------------------------------------------
def test_threshold_null_means_the_default(llm_server: Running, llm_http: httpx.Client) -> None:
    _facts(llm_server, "The user likes jasmine tea", "The user's car is a red Volvo")
    query = {"query": "What tea does the user like?"}

    def ids(extra: dict[str, Any]) -> list[str]:
        hits = _ok(llm_http.post("/search_memory/", json=query | extra))["results"]
        return [h["mem_id"] for h in hits]

    assert ids({"threshold": None}) == ids({"threshold": 0}) == ids({})
    assert len(ids({"threshold": 0.5})) < len(ids({}))  # the default cuts nothing
    summaries = llm_http.post("/search_user_history_summary/", json=query | {"threshold": None})
    assert _ok(summaries) == {"results": []}


@pytest.mark.parametrize(
    ("page_size", "expected"),
    [
        (None, 10),
        (True, 10),
        ("abc", 10),
        ([3], 10),
        (0, 10),
        (-5, 10),
        ("7", 7),
        (7.9, 7),
        (100, 100),
        (101, 100),
        (10**9, 100),
    ],
)
def test_page_size_is_clamped_never_refused(
    server: Running, http: httpx.Client, page_size: object, expected: int
) -> None:
    server.engine.add_many(
        [NewMemory(text=f"fact {i}", type=MemoryType.SEMANTIC) for i in range(120)],
        user_id="u",
        scope_id="s",
    )
    body = {"user_id": "u", "scope_id": "s", "page_size": page_size, "memory_type": "semantic"}
    for path in ("/get_user_mem_by_page/", "/get_user_mem_by_page_with_total/"):
        page = _ok(http.post(path, json=body))
        assert len(page["results"]) == expected and page["total"] == 120


def test_memory_type_null_lists_every_type(server: Running, http: httpx.Client) -> None:
    _facts(server, "one fact")
    page = _ok(http.post("/get_user_mem_by_page/", json={"memory_type": None}))
    assert [i["type"] for i in page["results"]] == ["semantic_memory"]
