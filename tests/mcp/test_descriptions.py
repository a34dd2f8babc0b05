"""What an MCP client shows a person: each tool's description as written, without the
indentation of the docstring it came from."""

from __future__ import annotations

from collections.abc import Callable

from tests.api.conftest import Running
from tests.mcp.conftest import http_client, run


def test_tool_descriptions_are_dedented(serve: Callable[..., Running]) -> None:
    server = serve()

    async def script() -> dict[str, str]:
        async with http_client(server.url) as client:
            return {t.name: t.description or "" for t in (await client.list_tools()).tools}

    described = run(script)
    assert described
    for name, text in described.items():
        assert text and text == text.strip(), name
        lines = text.splitlines()
        assert all(not line.startswith(" ") for line in lines), (name, text)
    assert "\n" in described["add_messages"]  # a description of two lines keeps them
