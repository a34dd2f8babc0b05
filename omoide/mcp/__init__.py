"""omoide as an MCP server: the compat MCP tools (an emulated product's names, arguments and
reply shapes; see ``tools``) plus ``get_context``, ``graph_neighborhood`` and ``list_sessions``.

    omoide mcp                       # stdio, for Claude Desktop, Cursor, Codex, ...
    omoide serve                     # streamable HTTP at http://127.0.0.1:8000/mcp

``server`` registers the tools, ``tools`` implements them over the engine, ``http`` puts them in
the API app behind its keys, ``stdio`` runs them for ``omoide mcp``.
"""
