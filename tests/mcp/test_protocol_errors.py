"""A client's mistakes answered as the MCP specification says, through the SDK's own client over
stdio (a real ``omoide mcp``) and streamable HTTP (a real server).

An unknown tool or prompt is a protocol error, JSON-RPC's -32602, as the specification's tools
and prompts pages show: the SDK answered an unknown tool with a tool result (``isError``) and an
unknown prompt with error code 0 and a traceback in the server's log. Arguments that fail the
schema stay a tool error a model can correct, worded without the SDK's internal model name and
pydantic's links. And ``get_memories`` of a type JiuwenMemory does not know says why it listed
every type, as the REST route does in its header."""

from __future__ import annotations

import doctest
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

import omoide.compat.jiuwen.mcp_protocol
from tests.api.conftest import Running
from tests.mcp.conftest import data, error, http_client, run, stdio_params


async def _mistakes(client: Client) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for name, call in (
        ("tool", lambda: client.call_tool("no_such_tool", {})),
        ("prompt", lambda: client.get_prompt("no_such_prompt")),
    ):
        with pytest.raises(MCPError) as raised:
            await call()
        found[name] = raised.value
    found["missing"] = await client.call_tool("search_memories", {})
    found["range"] = await client.call_tool("search_memories", {"query": "tea", "num": 5000})
    found["item"] = await client.call_tool("add_messages", {"messages": ["hello"]})
    found["fine"] = await client.call_tool("search_memories", {"query": "tea"})
    return found


def _check(found: dict[str, Any]) -> None:
    assert (found["tool"].code, found["tool"].message) == (
        INVALID_PARAMS,
        "Unknown tool: no_such_tool",
    )
    assert (found["prompt"].code, found["prompt"].message) == (
        INVALID_PARAMS,
        "Unknown prompt: no_such_prompt",
    )
    assert error(found["missing"]) == (
        "Error executing tool search_memories: query: Field required"
    )
    assert error(found["range"]) == (
        "Error executing tool search_memories: num: Input should be less than or equal to 1000"
    )
    assert error(found["item"]).startswith("Error executing tool add_messages: messages.0: ")
    for key in ("missing", "range", "item"):
        assert "pydantic" not in error(found[key]) and "Arguments" not in error(found[key])
    assert data(found["fine"])["results"] == []


def test_mistakes_over_stdio(tmp_path: Path) -> None:
    async def script() -> dict[str, Any]:
        params = stdio_params(tmp_path, tmp_path / "stdio.db")
        async with Client(stdio_client(params, errlog=log)) as client:
            return await _mistakes(client)

    with (tmp_path / "stderr.log").open("w+") as log:
        _check(run(script))
        log.seek(0)
        assert "Traceback" not in log.read()  # a client's mistake is not the server's error


def test_mistakes_over_http(serve: Callable[..., Running]) -> None:
    server = serve()

    async def script() -> dict[str, Any]:
        async with http_client(server.url) as client:
            return await _mistakes(client)

    _check(run(script))


def test_a_page_of_an_unknown_type_says_it_listed_every_type(
    serve: Callable[..., Running],
) -> None:
    server = serve()
    server.engine.add("Mei drinks jasmine tea")

    async def script() -> list[Any]:
        async with http_client(server.url) as client:
            odd = await client.call_tool("get_memories", {"memory_type": "facts"})
            known = await client.call_tool("get_memories", {"memory_type": "episodic_memory"})
            return [odd, known]

    odd, known = run(script)
    assert [m["content"] for m in data(odd)["results"]] == ["Mei drinks jasmine tea"]
    assert data(odd)["warnings"] == [
        "memory_type 'facts' is not a JiuwenMemory type; listed every type, as upstream does"
    ]
    assert data(known)["warnings"] == []


def test_the_argument_wording_examples_run() -> None:
    results = doctest.testmod(omoide.compat.jiuwen.mcp_protocol)
    assert results.attempted and not results.failed


def test_delete_all_takes_only_the_json_true_as_confirmation(
    serve: Callable[..., Running],
) -> None:
    server = serve()
    server.engine.add("Mei drinks jasmine tea")

    async def script() -> list[Any]:
        async with http_client(server.url) as client:
            said = [
                await client.call_tool("delete_all_memories", {"confirm": word})
                for word in ("yes", "true", 1)
            ]
            return [*said, await client.call_tool("get_memories", {})]

    *said, left = run(script)
    for refused in said:
        assert error(refused).endswith("confirm: Input should be a valid boolean")
    assert [m["content"] for m in data(left)["results"]] == ["Mei drinks jasmine tea"]
