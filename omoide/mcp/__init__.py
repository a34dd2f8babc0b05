"""omoide as an MCP server: JiuwenMemory's MCP tools (same names and arguments) plus
``get_context``, ``graph_neighborhood`` and ``list_sessions``.

    omoide mcp                       # stdio, for Claude Desktop, Cursor, Codex, ...
    omoide serve                     # streamable HTTP at http://127.0.0.1:8000/mcp

``server`` registers the tools, ``tools`` implements them over the engine, ``http`` puts them in
the API app behind its keys, ``stdio`` runs them for ``omoide mcp``.
"""
