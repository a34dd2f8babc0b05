"""A tool's arguments are bounded where the REST routes bound them, and a refusal names the
argument: a page or an offset past SQLite's 64-bit integers was an unexpected exception,
answered as a bare "Error executing tool get_memories" (and a traceback in the server's log)."""

from __future__ import annotations

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
