"""``omoide mcp``: the MCP server over stdin/stdout, for one local agent.

The process owns one engine; there is no key, so calls may name any tenant and default to
``MCP_DEFAULT_USER_ID`` / ``MCP_DEFAULT_SCOPE_ID``. While it serves, the SDK points fd 1 at
stderr, so a stray print (a model loading, say) cannot corrupt the protocol stream.

The transport is the SDK's (``mcp.server.stdio.stdio_server``) with one step between it and the
server (``serve_stdio``): the SDK hands on a line that is not a JSON-RPC message as an exception,
which its server only logs, so the client waited for a reply that never came. JSON-RPC 2.0 says
such a line gets an error with ``"id": null``: ``-32700`` (Parse error) when it is not JSON,
``-32600`` (Invalid Request) when it is JSON but not a message. The server goes on serving;
a blank line gets nothing.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError

from omoide.api.deps import Tenancy
from omoide.config import Settings
from omoide.mcp import BuildServer
from omoide.memory import Memory
from omoide.redact import redact_logs


def run_stdio(engine: Memory, settings: Settings, build: BuildServer) -> None:
    """Serve until stdin closes. Logs go to stderr: warnings and worse, or everything with
    ``OMOIDE_LOG_LEVEL=debug`` (an agent host shows a server's stderr as its log)."""
    debug = settings.server.log_level.lower() in ("debug", "trace")
    logging.basicConfig(
        level=logging.DEBUG if debug else logging.WARNING,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    redact_logs()
    server = build(lambda _ctx: (engine, Tenancy(None)), settings, "DEBUG" if debug else "WARNING")
    anyio.run(serve_stdio, server)


async def serve_stdio(server: MCPServer[Any]) -> None:
    """``server.run("stdio")``, answering every line that is not a message (``refusal``)."""
    # MCPServer.run_stdio_async drives this same low-level server over the same transport.
    lowlevel = server._lowlevel_server
    async with stdio_server() as (read_stream, write_stream):
        send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)

        async def relay() -> None:
            try:
                async with send:
                    async for item in read_stream:
                        if not isinstance(item, Exception):
                            await send.send(item)
                        elif (reply := refusal(item)) is not None:
                            await write_stream.send(SessionMessage(reply))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return  # the server has finished: nothing is read any more

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(relay)
            await lowlevel.run(receive, write_stream, lowlevel.create_initialization_options())
            tasks.cancel_scope.cancel()


def refusal(exc: Exception) -> JSONRPCError | None:
    """The JSON-RPC error for a line the SDK could not read as a message (``exc``), or None for
    a blank line."""
    errors = exc.errors() if isinstance(exc, ValidationError) else []
    if errors and errors[0]["type"] != "json_invalid":
        code, message = INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message"
    elif errors and not str(errors[0].get("input", "")).strip():
        return None
    else:
        code, message = PARSE_ERROR, "Parse error: the line is not JSON"
    return JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(code=code, message=message))
