"""JiuwenMemory's MCP server (official ``mcp`` SDK): its tools plus omoide's own, over any engine.

``build_server(who, settings)`` registers the tools; ``who(ctx)`` says who is calling (the
memory and the key's tenancy; the default ids come from the settings). Over stdio that is fixed
for the process; over streamable HTTP (``omoide.mcp.http``) it comes from the HTTP request the
call arrived in, after the API's own authentication, so a tenant-bound key's tenant is the tool
calls' tenant. The composition root (``omoide.serve``) hands this builder to both transports.

A failure the caller can fix (unknown id, a user the key may not touch, a bad argument) comes
back as a tool error (``is_error``) whose text is upstream's ``{"error": "<tool> failed: ..."}``
with omoide's message; anything else is logged and reported without internals.
"""

from __future__ import annotations

import inspect
import json
import logging
from collections.abc import Callable
from typing import Annotated, Any, TypeVar, cast

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, TextContent
from mcp_types import ToolAnnotations
from pydantic import Field

from omoide.api.deps import Tenancy
from omoide.api.errors import client_message, status_for
from omoide.api.models import MAX_OFFSET
from omoide.compat.jiuwen import tools
from omoide.compat.jiuwen.mcp_protocol import Server
from omoide.compat.jiuwen.models import MAX_PAGE
from omoide.compat.jiuwen.tools import Caller, defaults
from omoide.config import Settings
from omoide.errors import OmoideError
from omoide.memory import Memory

Resolver = Callable[[Context[Any, Any]], Caller]
Who = Callable[[Context[Any, Any]], tuple[Memory, Tenancy]]
R = TypeVar("R")
log = logging.getLogger("omoide.mcp")

INSTRUCTIONS = """Long-term memory for this agent (omoide). Before answering about the user or
past conversations, call search_memories and search_history_summaries (or get_context for one
ready-made block); after a conversation turn worth keeping, call add_messages. Ids are per
tenant: user_id and scope_id default to the server's defaults (or to the API key's tenant)."""

UserId = Annotated[
    str | None, Field(description="The user; omitted: the server's default (or the key's user).")
]
ScopeId = Annotated[str | None, Field(description="The scope; omitted: the server's default.")]
# The REST routes' bound: a longer id named a session no route can reach.
SessionId = Annotated[
    str | None, Field(max_length=512, description="The session (conversation) id.")
]
Num = Annotated[int, Field(ge=1, le=1000, description="How many results at most.")]
Threshold = Annotated[
    float | None,
    Field(
        description="Minimum score of a result (its `score`); omitted: none, as the native "
        "search, or 0.3 for the vector recipe's cosine (the default recipe while "
        "OMOIDE_JIUWEN_COSINE_THRESHOLD is true)."
    ),
]
Recipe = Annotated[
    str | None,
    Field(
        description="A search recipe by name (hybrid, keyword, vector ...); omitted: the "
        "server's choice."
    ),
]
Result = dict[str, Any]
# What the tools accept, in their schemas: a client (a model) writes arguments from these, and
# the SDK's schema of ``list[dict[str, Any]]`` / ``dict[str, Any]`` said any object would do.
MESSAGES_SCHEMA: dict[str, Any] = {
    "minItems": 1,
    "items": {
        "type": "object",
        "properties": {
            "role": {"type": "string", "description": "user, assistant, ...; omitted: user"},
            "content": {"type": "string"},
        },
        "required": ["content"],
    },
}
# Text a tool refuses when empty or blank ("query must not be empty").
NOT_BLANK: dict[str, Any] = {"minLength": 1, "pattern": r"\S"}
Text = Annotated[str, Field(json_schema_extra=NOT_BLANK)]
VARIABLES_SCHEMA: dict[str, Any] = {
    "additionalProperties": {"type": ["string", "number", "integer", "boolean"]},
    "propertyNames": {"minLength": 1},
}

TOOL_NAMES = (
    "add_messages",
    "search_memories",
    "search_history_summaries",
    "get_memories",
    "update_memory",
    "delete_memory",
    "delete_all_memories",
    "get_variables",
    "update_variables",
    "delete_variables",
    "health_check",
    "get_context",
    "graph_neighborhood",
    "list_sessions",
)

# What each tool does to the memory, for clients that ask before a call that changes it (the
# specification's default for a tool without annotations: it may destroy). The searches and
# get_context record their hits as uses (the expiry reads them): additive, not read-only.
_READS = ToolAnnotations(read_only_hint=True, open_world_hint=False)
_ADDS = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
_CHANGES = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
)
ANNOTATIONS: dict[str, ToolAnnotations] = {
    "add_messages": _ADDS,
    "search_memories": _ADDS,
    "search_history_summaries": _ADDS,
    "get_memories": _READS,
    "update_memory": _CHANGES,
    "delete_memory": _CHANGES,
    "delete_all_memories": _CHANGES,
    "get_variables": _READS,
    "update_variables": _CHANGES,
    "delete_variables": _CHANGES,
    "health_check": _READS,
    "get_context": _ADDS,
    "graph_neighborhood": _READS,
    "list_sessions": _READS,
}


class Tools:
    """The tool functions; the SDK reads their signatures and docstrings as the tool schemas."""

    def __init__(self, resolve: Resolver) -> None:
        self._resolve = resolve

    def _run(self, ctx: Context[Any, Any], fn: Callable[..., R], *args: Any, **kwargs: Any) -> R:
        try:
            return fn(self._resolve(ctx), *args, **kwargs)
        except OmoideError as exc:
            # Upstream's tools answer a failure with this JSON as their whole text; a ToolError
            # would prefix it ("Error executing tool ..."), so the result is built here, still
            # flagged is_error. The SDK passes a CallToolResult through whatever the annotation.
            message = f"{fn.__name__} failed: {client_message(exc, status_for(exc), None)}"
            log.info("MCP tool %s: %s", fn.__name__, message)
            text = json.dumps({"error": message}, ensure_ascii=False)
            failed = CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)
            return cast(R, failed)

    def add_messages(
        self,
        messages: Annotated[
            list[dict[str, Any]],
            Field(
                description='[{"role": "user", "content": "..."}, ...]',
                json_schema_extra=MESSAGES_SCHEMA,
            ),
        ],
        ctx: Context[Any, Any],
        user_id: UserId = None,
        scope_id: ScopeId = None,
        infer: bool = True,
        session_id: SessionId = None,
    ) -> Result:
        """Store messages and extract long-term memories (profile, facts, episodes, summary)
        from them. infer=false stores them without extraction. Replies when extraction ended."""
        return self._run(ctx, tools.add_messages, messages, user_id, scope_id, infer, session_id)

    def search_memories(
        self,
        query: Text,
        ctx: Context[Any, Any],
        num: Num = 5,
        threshold: Threshold = None,
        user_id: UserId = None,
        scope_id: ScopeId = None,
        recipe: Recipe = None,
    ) -> Result:
        """Search what is known about the user (profile, facts, episodes), most relevant first.
        Pair it with search_history_summaries for the fullest recall."""
        ids = {"user_id": user_id, "scope_id": scope_id}
        return self._run(ctx, tools.search_memories, query, num, threshold, recipe, **ids)

    def search_history_summaries(
        self,
        query: Text,
        ctx: Context[Any, Any],
        num: Num = 3,
        threshold: Threshold = None,
        user_id: UserId = None,
        scope_id: ScopeId = None,
        recipe: Recipe = None,
    ) -> Result:
        """Search summaries of past conversations (topics and conclusions), most relevant
        first."""
        ids = {"user_id": user_id, "scope_id": scope_id}
        return self._run(ctx, tools.search_history_summaries, query, num, threshold, recipe, **ids)

    def get_memories(
        self,
        ctx: Context[Any, Any],
        page_size: Annotated[int, Field(ge=1, le=1000)] = 10,
        # The REST routes' bounds: past them the offset left SQLite's 64-bit integers, an
        # unexpected error without a word (stdio has no body guard to refuse it first).
        page_idx: Annotated[int, Field(ge=1, le=MAX_PAGE)] = 1,
        memory_type: str = "unknown",
        user_id: UserId = None,
        scope_id: ScopeId = None,
    ) -> Result:
        """One page of memories, newest first. memory_type: unknown (all), user_profile,
        semantic_memory, episodic_memory, summary or variable."""
        args = (page_size, page_idx, memory_type, user_id, scope_id)
        return self._run(ctx, tools.get_memories, *args)

    def update_memory(
        self,
        mem_id: str,
        memory: str,
        ctx: Context[Any, Any],
        user_id: UserId = None,
        scope_id: ScopeId = None,
    ) -> Result:
        """Replace a memory's text (the old text stays in its history); var:<name> sets that
        variable."""
        ids = {"user_id": user_id, "scope_id": scope_id}
        return self._run(ctx, tools.update_memory, mem_id, memory, **ids)

    def delete_memory(
        self, mem_id: str, ctx: Context[Any, Any], user_id: UserId = None, scope_id: ScopeId = None
    ) -> Result:
        """Delete one memory by its mem_id (var:<name> deletes that variable)."""
        ids = {"user_id": user_id, "scope_id": scope_id}
        return self._run(ctx, tools.delete_memory, mem_id, **ids)

    def delete_all_memories(
        self,
        ctx: Context[Any, Any],
        scope_id: ScopeId = None,
        # strict: the JSON true the description asks for; lax validation took the strings
        # "yes", "on", "1" and "true" as true and deleted the scope
        confirm: Annotated[bool, Field(strict=True)] = False,
        user_id: Annotated[
            str | None, Field(description="Only this user's; omitted: every user's in the scope.")
        ] = None,
    ) -> Result:
        """DANGEROUS, cannot be undone: delete every memory, session and variable in a scope.
        Refused (status 'aborted') unless confirm is true."""
        return self._run(ctx, tools.delete_all_memories, scope_id, confirm, user_id)

    def get_variables(
        self,
        ctx: Context[Any, Any],
        names: list[str] | None = None,
        user_id: UserId = None,
        scope_id: ScopeId = None,
    ) -> Result:
        """The user's variables by name (all when names is omitted); unknown names are absent."""
        ids = {"user_id": user_id, "scope_id": scope_id}
        return self._run(ctx, tools.get_variables, names, **ids)

    def update_variables(
        self,
        variables: Annotated[
            dict[str, Any],
            Field(description='{"city": "Shenzhen", ...}', json_schema_extra=VARIABLES_SCHEMA),
        ],
        ctx: Context[Any, Any],
        user_id: UserId = None,
        scope_id: ScopeId = None,
    ) -> Result:
        """Set variables; a value is coerced to the type its variable already has."""
        ids = {"user_id": user_id, "scope_id": scope_id}
        return self._run(ctx, tools.update_variables, variables, **ids)

    def delete_variables(
        self,
        names: list[str],
        ctx: Context[Any, Any],
        user_id: UserId = None,
        scope_id: ScopeId = None,
    ) -> Result:
        """Delete variables by name; deleted lists the names that existed."""
        ids = {"user_id": user_id, "scope_id": scope_id}
        return self._run(ctx, tools.delete_variables, names, **ids)

    def health_check(self, ctx: Context[Any, Any]) -> Result:
        """Whether the memory service is ready: store, embedder and LLM status."""
        return self._run(ctx, tools.health_check)

    def get_context(
        self,
        query: Text,
        ctx: Context[Any, Any],
        token_budget: Annotated[int, Field(ge=100, le=200_000)] = 2000,
        session_id: SessionId = None,
        user_id: UserId = None,
        scope_id: ScopeId = None,
    ) -> Result:
        """A ready-to-paste context block for the query within token_budget tokens: profile,
        variables, the session's summary, relevant memories, graph facts and recent turns."""
        ids = {"user_id": user_id, "scope_id": scope_id}
        return self._run(ctx, tools.get_context, query, token_budget, session_id, **ids)

    def graph_neighborhood(
        self,
        # The bound of the name search it goes through, named here: past it the error said
        # "query", an argument this tool does not have.
        entity: Annotated[
            str,
            Field(
                max_length=10_000,
                description="An entity's name (any case) or id.",
                json_schema_extra=NOT_BLANK,
            ),
        ],
        ctx: Context[Any, Any],
        depth: Annotated[int, Field(ge=0, le=6)] = 1,
        user_id: UserId = None,
        scope_id: ScopeId = None,
    ) -> Result:
        """Entities within depth relationships of one entity, with the relationships."""
        ids = {"user_id": user_id, "scope_id": scope_id}
        return self._run(ctx, tools.graph_neighborhood, entity, depth, **ids)

    def list_sessions(
        self,
        ctx: Context[Any, Any],
        limit: Annotated[int, Field(ge=1, le=1000)] = 20,
        offset: Annotated[int, Field(ge=0, le=MAX_OFFSET)] = 0,
        user_id: UserId = None,
        scope_id: ScopeId = None,
    ) -> Result:
        """The user's conversations (sessions), newest first; total counts them all."""
        ids = {"user_id": user_id, "scope_id": scope_id}
        return self._run(ctx, tools.list_sessions, limit, offset, **ids)


def build_server(who: Who, settings: Settings, log_level: str = "WARNING") -> MCPServer[Any]:
    """An ``MCPServer`` named ``omoide`` with every tool of ``TOOL_NAMES``: ``who(ctx)`` gives
    a call's memory and tenancy, ``settings`` the default ids and search recipe."""
    from omoide._version import __version__

    level = log_level.upper() if log_level.upper() in _LEVELS else "WARNING"
    # MCPServer() calls logging.basicConfig (a rich handler on the root logger) when the root
    # has no handler yet; logging is the application's to configure, so give it one meanwhile.
    root, placeholder = logging.getLogger(), logging.NullHandler()
    root.addHandler(placeholder)
    try:
        server: MCPServer[Any] = Server(
            "omoide",
            version=__version__,
            instructions=INSTRUCTIONS,
            log_level=level,  # type: ignore[arg-type]  # checked against _LEVELS above
        )
    finally:
        root.removeHandler(placeholder)
    fixed = defaults(settings)

    def resolve(ctx: Context[Any, Any]) -> Caller:
        memory, tenancy = who(ctx)
        return Caller(memory, tenancy, *fixed)

    handlers = Tools(resolve)
    for name in TOOL_NAMES:
        handler = getattr(handlers, name)
        # A docstring's continuation lines carry the method's indentation; a client shows the
        # description as written, so it gets the text without it.
        description = inspect.cleandoc(handler.__doc__ or "")
        server.add_tool(
            handler,
            name=name,
            description=description,
            annotations=ANNOTATIONS[name],
            structured_output=True,
        )
    return server


_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
