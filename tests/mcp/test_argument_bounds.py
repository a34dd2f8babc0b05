"""A tool's arguments are bounded where the REST routes bound them, and a refusal names the
argument: a page or an offset past SQLite's 64-bit integers was an unexpected exception,
answered as a bare "Error executing tool get_memories" (and a traceback in the server's log)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.stdio import stdio_client

from tests.api.conftest import Running
from tests.mcp.conftest import data, error, http_client, run, stdio_params


def test_a_page_past_the_bound_is_a_tool_error_naming_it(serve: Callable[..., Running]) -> None:
    server = serve()
    server.engine.add("Mei drinks jasmine tea")

    async def script() -> list[Any]:
        async with http_client(server.url) as client:
            far = await client.call_tool("get_memories", {"page_idx": 10**18, "page_size": 1000})
            last = await client.call_tool("get_memories", {"page_idx": 10**9, "page_size": 1000})
            first = await client.call_tool("get_memories", {})
            return [far, last, first]

    far, last, first = run(script)
    assert "page_idx" in error(far) and "1000000000" in error(far)
    assert data(last)["results"] == []
    assert [m["content"] for m in data(first)["results"]] == ["Mei drinks jasmine tea"]


def test_an_offset_past_64_bits_over_stdio_is_a_tool_error_naming_it(tmp_path: Path) -> None:
    """Over stdio no body guard refuses the integer first, as the HTTP transport's does."""

    async def script() -> list[Any]:
        params = stdio_params(tmp_path, tmp_path / "stdio.db")
        async with Client(stdio_client(params)) as client:
            huge = await client.call_tool("list_sessions", {"offset": 10**19})
            page = await client.call_tool("get_memories", {"page_idx": 10**18})
            fine = await client.call_tool("list_sessions", {"offset": 2**53 - 1})
            return [huge, page, fine]

    huge, page, fine = run(script)
    assert "offset" in error(huge) and str(2**53 - 1) in error(huge)
    assert "page_idx" in error(page)
    assert data(fine)["results"] == []


def test_an_entity_past_the_search_bound_is_named_as_the_entity(
    serve: Callable[..., Running],
) -> None:
    server = serve()

    async def script() -> Any:
        async with http_client(server.url) as client:
            return await client.call_tool("graph_neighborhood", {"entity": "x" * 10_001})

    message = error(run(script))
    assert "entity" in message and "10000" in message and "query" not in message


def test_an_empty_or_long_memory_is_named_as_the_memory(serve: Callable[..., Running]) -> None:
    """update_memory's text is its ``memory`` argument; the refusal said ``text``."""
    server = serve(max_body_bytes=1_000_000)  # the text's own limit, not the body's, refuses
    [item] = server.engine.add("Mei drinks jasmine tea")
    limit = server.engine.max_text_chars

    async def script() -> list[Any]:
        async with http_client(server.url) as client:
            empty = await client.call_tool("update_memory", {"mem_id": item.id, "memory": " "})
            long = await client.call_tool(
                "update_memory", {"mem_id": item.id, "memory": "x" * (limit + 1)}
            )
            return [empty, long]

    empty, long = run(script)
    assert json.loads(error(empty)) == {"error": "update_memory failed: memory must not be empty"}
    assert json.loads(error(long))["error"].endswith(
        f"failed: memory is {limit + 1} characters; the limit is {limit}"
    )
