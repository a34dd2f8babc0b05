"""omoide as an MCP server: the transports that serve a tool set.

    omoide mcp                       # stdio, for Claude Desktop, Cursor, Codex, ...
    omoide serve                     # streamable HTTP at http://127.0.0.1:8000/mcp

``http`` puts the tools in the API app behind its keys, ``stdio`` runs them for ``omoide mcp``.
Which tools they serve (an emulated product's names, arguments and reply shapes, plus
``get_context``, ``graph_neighborhood`` and ``list_sessions``) is the composition root's
choice (``omoide.serve.tools``): a ``BuildServer`` that makes the server from ``who`` (a call's
memory and tenancy), the settings and a log level.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver import Context, MCPServer

from omoide.api.deps import Tenancy
from omoide.config import Settings
from omoide.memory import Memory

Who = Callable[[Context[Any, Any]], tuple[Memory, Tenancy]]
BuildServer = Callable[[Who, Settings, str], MCPServer[Any]]
