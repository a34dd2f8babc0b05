"""``omoide mcp`` as a real subprocess, driven over stdio by the SDK's client."""

from __future__ import annotations

import json
import math
import queue
import subprocess
import threading
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters
from mcp.client.stdio import get_default_environment
from mcp_types import LATEST_PROTOCOL_VERSION

from omoide import Memory
from omoide.compat.jiuwen.mcp import TOOL_NAMES
from omoide.embed import HashEmbedder
from omoide.types import UNNAMED_SESSION, MemoryType
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
        assert [s.id for s in sessions] == [UNNAMED_SESSION]


# issue 36, "Also": a line that is not JSON got no reply --------------------------------------
class _Wire:
    """``omoide mcp`` over raw pipes: lines written, lines read (by a thread, so that a reply
    that never comes fails the test instead of hanging it)."""

    def __init__(self, params: StdioServerParameters) -> None:
        env = get_default_environment() | (params.env or {})
        self.process = subprocess.Popen(
            [params.command, *params.args],
            cwd=params.cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)

    def send(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def reply(self) -> dict[str, Any]:
        message: dict[str, Any] = json.loads(self.lines.get(timeout=60))
        return message

    def close(self) -> int:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.close()
        code = self.process.wait(60)
        self._reader.join(60)  # the pipe has ended with the process
        self.process.stdout.close()
        return code


def _request(id_: int, method: str, params: dict[str, Any] | None = None) -> str:
    message = {"jsonrpc": "2.0", "id": id_, "method": method}
    return json.dumps(message | ({"params": params} if params is not None else {}))


def test_a_line_that_is_not_json_rpc_gets_an_error_and_the_server_goes_on(
    tmp_path: Path,
) -> None:
    wire = _Wire(stdio_params(tmp_path, tmp_path / "wire.db"))
    hello = {"name": "test", "version": "1"}
    opening = {"protocolVersion": LATEST_PROTOCOL_VERSION, "capabilities": {}, "clientInfo": hello}
    try:
        wire.send("this is not json {")
        wire.send("")  # a blank line is no message: nothing to answer
        wire.send('{"hello": "world"}')  # JSON, but no JSON-RPC message
        wire.send(_request(1, "initialize", opening))
        # each line is answered before the next is read: the errors come first, in order
        parse_error = wire.reply()
        assert parse_error["id"] is None and parse_error["error"]["code"] == -32700, parse_error
        assert parse_error["error"]["message"].startswith("Parse error")
        invalid = wire.reply()
        assert invalid["id"] is None and invalid["error"]["code"] == -32600, invalid
        initialized = wire.reply()
        assert initialized["id"] == 1 and initialized["result"]["serverInfo"]["name"] == "omoide"
        wire.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        wire.send(_request(2, "tools/list"))
        tools = wire.reply()
    finally:
        code = wire.close()
    assert tools["id"] == 2, tools
    assert sorted(t["name"] for t in tools["result"]["tools"]) == sorted(TOOL_NAMES)
    assert code == 0  # stdin closed: the server ended cleanly


def test_a_threshold_that_is_not_a_finite_number_is_a_tool_error(tmp_path: Path) -> None:
    """JSON from a Python client may carry ``NaN`` or ``Infinity`` (``json.dumps`` writes them),
    and the stdio transport reads them as floats. A NaN threshold compared false with every score
    and an infinite one kept all or none: an empty or full result with no word, where ``/v1``
    and the JiuwenMemory routes answer 422. Over stdio it is a tool error naming the argument."""
    db = tmp_path / "nan.db"
    with Memory(db, embedder=HashEmbedder(), workers=0) as memory:
        memory.add("Mei drinks jasmine tea", user_id="agent", type=MemoryType.SEMANTIC)
    wire = _Wire(stdio_params(tmp_path, db, MCP_DEFAULT_USER_ID="agent"))
    hello = {"name": "test", "version": "1"}
    opening = {"protocolVersion": LATEST_PROTOCOL_VERSION, "capabilities": {}, "clientInfo": hello}
    thresholds = (math.nan, math.inf, -math.inf)  # json.dumps writes NaN, Infinity, -Infinity
    try:
        wire.send(_request(1, "initialize", opening))
        assert wire.reply()["id"] == 1
        wire.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        for id_, value in enumerate(thresholds, start=2):
            arguments = {"query": "tea", "threshold": value}
            wire.send(
                _request(id_, "tools/call", {"name": "search_memories", "arguments": arguments})
            )
        replies = [wire.reply() for _ in thresholds]
    finally:
        wire.close()
    for value, reply in zip(thresholds, replies, strict=True):
        result = reply["result"]
        assert result["isError"] is True, (value, result)
        assert "threshold must be a finite number" in result["content"][0]["text"], result
