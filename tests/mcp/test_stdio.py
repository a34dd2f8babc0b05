"""``omoide mcp`` as a real subprocess, driven over stdio by the SDK's client."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp import Client

from omoide import Memory
from omoide.embed import HashEmbedder
from omoide.mcp.server import TOOL_NAMES
from omoide.types import MemoryType
from tests.mcp.conftest import data, error, run, stdio_params


def test_stdio_serves_the_tools_on_the_given_database(tmp_path: Path) -> None:
    db = tmp_path / "stdio.db"
    with Memory(db, embedder=HashEmbedder(), workers=0) as memory:
        fact = memory.add("Mei drinks jasmine tea", user_id="agent", type=MemoryType.SEMANTIC)[0]
    params = stdio_params(tmp_path, db, MCP_DEFAULT_USER_ID="agent")

    async def script() -> list[Any]:
        async with Client(params) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            found = await client.call_tool("search_memories", {"query": "Mei drinks jasmine tea"})
            added = await client.call_tool(
                "add_messages",
                {"messages": [{"role": "user", "content": "I moved"}], "infer": False},
            )
            await client.call_tool("update_variables", {"variables": {"city": "Shenzhen"}})
            missing = await client.call_tool("update_memory", {"mem_id": "nope", "memory": "x"})
            return [names, data(found), data(added), error(missing)]

    names, found, added, missing = run(script)
    assert sorted(names) == sorted(TOOL_NAMES)
    assert [r["mem_id"] for r in found["results"]] == [fact.id]
    assert added["extraction"]["state"] == "off"  # infer=false: stored, nothing extracted
    assert "not found" in missing
    with Memory(db, embedder=HashEmbedder(), workers=0) as memory:  # the subprocess has exited
        assert memory.get_variables(None, user_id="agent") == {"city": "Shenzhen"}
        sessions, _ = memory.list_sessions(user_id="agent")
        assert [s.id for s in sessions] == ["mcp"]
