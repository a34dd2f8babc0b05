"""MCP over streamable HTTP at /mcp on a live server, driven by the SDK's client."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from mcp import MCPError
from mcp.types import CallToolResult
from mcp_types import INVALID_PARAMS, INVALID_REQUEST

from omoide.compat.jiuwen.mcp import TOOL_NAMES
from omoide.types import UNNAMED_SESSION, MemoryType, Scope
from tests.api.conftest import BODY_LIMIT, KEY, Running
from tests.knowledge.conftest import build_graph
from tests.mcp.conftest import data, error, http_client, run

JIUWEN_TOOLS = {
    "add_messages": {"messages", "user_id", "scope_id", "infer"},
    "search_memories": {"query", "num", "threshold", "user_id", "scope_id"},
    "search_history_summaries": {"query", "num", "threshold", "user_id", "scope_id"},
    "get_memories": {"page_size", "page_idx", "memory_type", "user_id", "scope_id"},
    "update_memory": {"mem_id", "memory", "user_id", "scope_id"},
    "delete_memory": {"mem_id", "user_id", "scope_id"},
    "delete_all_memories": {"scope_id", "confirm"},
    "get_variables": {"names", "user_id", "scope_id"},
    "update_variables": {"variables", "user_id", "scope_id"},
    "delete_variables": {"names", "user_id", "scope_id"},
    "health_check": set(),
}


def _semantic(server: Running, text: str, user_id: str, scope_id: str = "default") -> str:
    items = server.engine.add(text, type=MemoryType.SEMANTIC, user_id=user_id, scope_id=scope_id)
    return items[0].id


def test_tools_have_jiuwens_names_arguments_and_defaults(serve: Callable[..., Running]) -> None:
    server = serve()

    async def script() -> dict[str, Any]:
        async with http_client(server.url) as client:
            return {t.name: t.input_schema for t in (await client.list_tools()).tools}

    schemas = run(script)
    assert set(schemas) == set(TOOL_NAMES)
    for name, arguments in JIUWEN_TOOLS.items():
        assert arguments <= set(schemas[name]["properties"]), name
    search = schemas["search_memories"]["properties"]
    # upstream's 0.3 is a cosine; omitted here, the server picks the cut of the score it ranks by
    assert (search["num"]["default"], search["threshold"]["default"]) == (5, None)
    assert "omitted: none" in search["threshold"]["description"]
    assert search["recipe"]["default"] is None  # the server's choice
    assert schemas["search_history_summaries"]["properties"]["num"]["default"] == 3
    page = schemas["get_memories"]["properties"]
    assert (page["page_size"]["default"], page["page_idx"]["default"]) == (10, 1)
    assert page["memory_type"]["default"] == "unknown"
    assert schemas["delete_all_memories"]["properties"]["confirm"]["default"] is False
    assert schemas["add_messages"]["properties"]["infer"]["default"] is True
    assert {"query", "token_budget"} <= set(schemas["get_context"]["properties"])
    assert {"entity", "depth"} <= set(schemas["graph_neighborhood"]["properties"])


def test_add_search_page_update_and_delete(serve: Callable[..., Running]) -> None:
    server = serve()
    tea = _semantic(server, "Mei drinks jasmine tea every morning", user_id="mei")

    async def script() -> list[Any]:
        async with http_client(server.url) as client:
            added = await client.call_tool(
                "add_messages",
                {
                    "messages": [{"role": "user", "content": "I moved to Shenzhen"}],
                    "user_id": "mei",
                },
            )
            found = await client.call_tool(
                "search_memories", {"query": "what does Mei drink?", "user_id": "mei"}
            )
            page = await client.call_tool("get_memories", {"user_id": "mei"})
            await client.call_tool(
                "update_memory", {"mem_id": tea, "memory": "Mei drinks oolong", "user_id": "mei"}
            )
            gone = await client.call_tool("delete_memory", {"mem_id": tea, "user_id": "mei"})
            again = await client.call_tool("delete_memory", {"mem_id": tea, "user_id": "mei"})
            sessions = await client.call_tool("list_sessions", {"user_id": "mei"})
            return [data(added), data(found), data(page), data(gone), error(again), data(sessions)]

    added, found, page, gone, again, sessions = run(script)
    assert added["status"] == "added" and added["extraction"]["state"] == "disabled"  # no LLM
    # No threshold sent: nothing cut (as the native search); the answer first, scored higher.
    assert found["count"] == 2 and found["results"][0]["mem_id"] == tea
    assert found["results"][0]["score"] > found["results"][1]["score"]
    assert set(found["results"][0]) >= {"mem_id", "content", "type", "score"}
    # Without an LLM the stored turn is an episode (as on the JiuwenMemory routes), newest first.
    assert [r["mem_id"] for r in page["results"]] == [*added["added"], tea]
    assert page["total"] == 2 and page["results"][0]["type"] == "episodic_memory"
    assert gone == {"status": "deleted", "mem_id": tea}
    assert "not found" in again
    assert [s["id"] for s in sessions["results"]] == [UNNAMED_SESSION]
    history = server.engine.history(tea, user_id="mei")
    assert [h.new_text for h in history if h.new_text][-1] == "Mei drinks oolong"


def test_variables_round_trip(serve: Callable[..., Running]) -> None:
    server = serve()
    ids = {"user_id": "mei", "scope_id": "work"}

    async def script() -> list[Any]:
        async with http_client(server.url) as client:
            await client.call_tool("update_variables", {"variables": {"city": "Shenzhen"}, **ids})
            got = await client.call_tool("get_variables", {"names": ["city", "nope"], **ids})
            listed = await client.call_tool("get_memories", {"memory_type": "variable", **ids})
            deleted = await client.call_tool("delete_variables", {"names": ["city"], **ids})
            after = await client.call_tool("get_variables", ids)
            return [data(got), data(listed), data(deleted), data(after)]

    got, listed, deleted, after = run(script)
    assert got == {"variables": {"city": "Shenzhen"}}
    assert [r["mem_id"] for r in listed["results"]] == ["var:city"]
    assert deleted == {"status": "deleted", "deleted": ["city"], "names": ["city"]}
    assert after == {"variables": {}}


def test_variable_tools_answer_as_upstreams(serve: Callable[..., Running]) -> None:
    """Upstream's MCP server sets nothing for `{}` and says so, and its delete reply carries
    `status` and the `names` asked for."""
    server = serve()
    ids = {"user_id": "mei"}

    async def script() -> list[Any]:
        async with http_client(server.url) as client:
            empty = await client.call_tool("update_variables", {"variables": {}, **ids})
            await client.call_tool("update_variables", {"variables": {"city": "Shenzhen"}, **ids})
            names = ["city", "never-set"]
            deleted = await client.call_tool("delete_variables", {"names": names, **ids})
            return [data(empty), data(deleted)]

    empty, deleted = run(script)
    assert empty == {"status": "updated", "variables": {}}
    assert deleted == {"status": "deleted", "deleted": ["city"], "names": ["city", "never-set"]}
    assert server.engine.get_variables(user_id="mei") == {}


def test_add_messages_reply_has_upstreams_lists_per_type(serve: Callable[..., Running]) -> None:
    server = serve()
    message = {"role": "user", "content": "I moved to Shenzhen"}

    async def script() -> Any:
        async with http_client(server.url) as client:
            return data(await client.call_tool("add_messages", {"messages": [message]}))

    added = run(script)
    assert added["status"] == "added" and added["infer"] is True
    for kind in ("user_profile", "semantic_memory", "episodic_memory", "summary", "variables"):
        assert added[kind] == [], kind  # no LLM here: nothing extracted, as each list says


def test_delete_all_memories_refuses_without_confirm(serve: Callable[..., Running]) -> None:
    server = serve()
    for user in ("mei", "lin"):
        _semantic(server, f"{user} likes tea", user_id=user, scope_id="team")

    async def script() -> list[Any]:
        async with http_client(server.url) as client:
            refused = await client.call_tool("delete_all_memories", {"scope_id": "team"})
            count = server.engine.get_all(user_id="mei", scope_id="team").total
            done = await client.call_tool(
                "delete_all_memories", {"scope_id": "team", "confirm": True}
            )
            return [data(refused), count, data(done)]

    refused, count_before, done = run(script)
    assert refused["status"] == "aborted" and count_before == 1
    assert "irreversible" in refused["reason"].lower()  # the word upstream's own test looks for
    assert done["status"] == "deleted" and done["deleted"] == 2  # every user of the scope
    assert server.engine.get_all(user_id="lin", scope_id="team").total == 0


def test_ids_are_cleaned_and_defaults_come_from_settings(serve: Callable[..., Running]) -> None:
    server = serve(mcp_default_user_id="agent", mcp_default_scope_id="desk")

    async def script() -> None:
        async with http_client(server.url) as client:
            await client.call_tool("update_variables", {"variables": {"a": "1"}})
            long_id = " team/a\\b " + "x" * 300
            await client.call_tool(
                "update_variables", {"variables": {"b": "2"}, "user_id": long_id}
            )

    run(script)
    assert server.engine.get_variables(None, user_id="agent", scope_id="desk") == {"a": "1"}
    cleaned = ("team_a_b " + "x" * 300)[:128]
    assert server.engine.get_variables(None, user_id=cleaned, scope_id="desk") == {"b": "2"}


def test_a_session_id_longer_than_the_rest_routes_take_is_refused(
    serve: Callable[..., Running],
) -> None:
    """The tools take the session ids the REST routes take (512 characters at most): a longer
    one made a session no route can name, and any length up to the body limit was stored."""
    server = serve()
    message = [{"role": "user", "content": "hello"}]

    async def script() -> list[Any]:
        async with http_client(server.url) as client:
            out = []
            for session in ("s" * 513, "s" * 512):
                add = {"messages": message, "session_id": session, "infer": False}
                out.append(await client.call_tool("add_messages", add))
                context = {"query": "hello", "session_id": session}
                out.append(await client.call_tool("get_context", context))
            return out

    long_add, long_context, add, context = run(script)
    assert "512" in error(long_add) and "512" in error(long_context)
    assert data(add)["status"] == "added" and "hello" in data(context)["text"]
    assert [s.id for s in server.engine.list_sessions()[0]] == ["s" * 512]


def test_context_graph_and_health(serve: Callable[..., Running]) -> None:
    server = serve()
    _semantic(server, "Mei lives in Shenzhen", user_id="mei")
    build_graph(server.engine, Scope(user_id="mei"), [("Mei", "lives_in", "Shenzhen")])  # type: ignore[arg-type]

    async def script() -> list[Any]:
        async with http_client(server.url) as client:
            context = await client.call_tool(
                "get_context", {"query": "where does Mei live?", "user_id": "mei"}
            )
            graph = await client.call_tool(
                "graph_neighborhood", {"entity": "mei", "depth": 1, "user_id": "mei"}
            )
            unknown = await client.call_tool(
                "graph_neighborhood", {"entity": "Nobody", "user_id": "mei"}
            )
            health = await client.call_tool("health_check", {})
            return [data(context), data(graph), error(unknown), data(health)]

    context, graph, unknown, health = run(script)
    assert "Shenzhen" in context["text"] and context["tokens"] <= context["token_budget"]
    assert {n["name"] for n in graph["nodes"]} == {"Mei", "Shenzhen"}
    assert "not found" in unknown
    assert health["status"] == "healthy" and health["ready"] is True


# keys -----------------------------------------------------------------------------------------
def test_a_keyed_server_refuses_mcp_without_the_key(keyed: Running) -> None:
    for headers in ({}, {"Authorization": "Bearer wrong"}):
        response = httpx.post(
            f"{keyed.url}/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"Accept": "application/json, text/event-stream", **headers},
        )
        assert response.status_code == 401

    async def script() -> None:
        async with http_client(keyed.url, "wrong") as client:
            await client.list_tools()

    with pytest.raises(ExceptionGroup) as refused:
        run(script)
    # the 401's own message, in the JSON-RPC error the client reads (not its stand-in)
    assert refused.group_contains(MCPError, match="invalid or missing API key")


def test_the_guards_refusals_reach_an_mcp_client_with_their_message(
    serve: Callable[..., Running],
) -> None:
    """What the API's guards refuse before the tools run (a body over the limit, a NUL in an
    argument) reaches the SDK's client as a JSON-RPC error with the guard's message; it got
    "Server returned an error response", which says nothing of what to fix."""
    server = serve()
    too_long = "tea " * (BODY_LIMIT // 4)  # the JSON body passes the server's limit

    async def script() -> list[MCPError]:
        refused = []
        async with http_client(server.url) as client:
            for arguments in ({"query": too_long}, {"query": "tea", "user_id": "a\x00b"}):
                with pytest.raises(MCPError) as caught:
                    await client.call_tool("search_memories", arguments)
                refused.append(caught.value)
            assert (await client.list_tools()).tools  # the session goes on
        return refused

    too_large, nul = run(script)
    assert "larger than the limit" in str(too_large) and "OMOIDE_MAX_BODY_BYTES" in str(too_large)
    assert too_large.error.code == INVALID_REQUEST
    assert too_large.error.data["status"] == 413
    assert "user_id" in str(nul) and "NUL" in str(nul), nul
    assert nul.error.code == INVALID_PARAMS and nul.error.data["status"] == 422


def _post(server: Running, host: str, key: str | None = None) -> httpx.Response:
    headers = {"Host": host, "Accept": "application/json, text/event-stream"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    return httpx.post(f"{server.url}/mcp", json=request, headers=headers)


def test_without_a_key_only_loopback_host_names_reach_the_tools(
    serve: Callable[..., Running], keyed: Running
) -> None:
    open_server = serve()
    port = open_server.url.rsplit(":", 1)[1]
    assert _post(open_server, f"127.0.0.1:{port}").status_code == 200
    assert _post(open_server, f"localhost:{port}").status_code == 200
    assert _post(open_server, "rebound.example").status_code == 400  # DNS rebinding refused
    assert _post(keyed, "memory.example", KEY).status_code == 200  # e.g. behind a proxy


def test_a_bound_keys_tenant_is_the_tool_calls_tenant(keyed: Running) -> None:
    _semantic(keyed, "alice likes oolong tea", user_id="alice")
    _semantic(keyed, "bob likes oolong tea", user_id="bob", scope_id="demo")
    query = {"query": "who likes oolong tea?", "threshold": 0.0}

    async def script() -> list[CallToolResult]:
        async with http_client(keyed.url, "alice-key") as alice:
            own = await alice.call_tool("search_memories", query)
            named = await alice.call_tool("search_memories", {**query, "user_id": "alice"})
            other = await alice.call_tool("search_memories", {**query, "user_id": "bob"})
            write = await alice.call_tool(
                "update_variables", {"variables": {"x": "1"}, "user_id": "bob"}
            )
            wipe = await alice.call_tool(
                "delete_all_memories", {"scope_id": "default", "confirm": True}
            )
        async with http_client(keyed.url, "bob-demo-key") as bob:
            scoped = await bob.call_tool("search_memories", query)
            elsewhere = await bob.call_tool("search_memories", {**query, "scope_id": "other"})
        async with http_client(keyed.url, KEY) as admin:
            full = await admin.call_tool("search_memories", {**query, "user_id": "bob"})
        return [own, named, other, write, wipe, scoped, elsewhere, full]

    results = run(script)
    own, named, wipe, scoped, full = (data(results[i]) for i in (0, 1, 4, 5, 7))
    other, write, elsewhere = (error(results[i]) for i in (2, 3, 6))
    assert (
        [r["content"] for r in own["results"]]
        == ["alice likes oolong tea"]
        == [r["content"] for r in named["results"]]
    )
    assert "cannot access user 'bob'" in other and "cannot access user 'bob'" in write
    assert keyed.engine.get_variables(None, user_id="bob") == {}
    assert wipe["user_id"] == "alice" and wipe["deleted"] == 1  # only the key's own tenant
    assert keyed.engine.get_all(user_id="bob", scope_id="demo").total == 1
    assert [r["content"] for r in scoped["results"]] == ["bob likes oolong tea"]
    assert "cannot access scope 'other'" in elsewhere
    assert full["count"] == 0  # bob's memory is in scope "demo", the full key asked "default"


def test_the_error_conversions_examples_hold() -> None:
    """``as_jsonrpc_error``'s examples (omoide's error body in, a JSON-RPC error out; a body
    that already is one unchanged) run as written."""
    import doctest

    import omoide.mcp.http

    results = doctest.testmod(omoide.mcp.http)
    assert results.attempted >= 4 and results.failed == 0


def test_a_failing_tool_says_so_in_upstreams_json_naming_the_tool(
    serve: Callable[..., Running],
) -> None:
    """Upstream's tools answer a failure with ``{"error": "<tool> failed: ..."}`` as their text;
    a client parsing that JSON still can, while ``is_error`` flags the failure."""
    server = serve()

    async def script() -> list[CallToolResult]:
        async with http_client(server.url) as client:
            return [
                await client.call_tool("update_memory", {"mem_id": "nope", "memory": "x"}),
                await client.call_tool("delete_memory", {"mem_id": "nope"}),
            ]

    for name, result in zip(("update_memory", "delete_memory"), run(script), strict=True):
        reply = json.loads(error(result))
        assert list(reply) == ["error"] and reply["error"].startswith(f"{name} failed: "), reply
        assert "not found" in reply["error"]
