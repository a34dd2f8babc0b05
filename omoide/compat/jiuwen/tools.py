"""What each MCP tool does (``mcp.py`` registers them), as plain functions of a ``Caller``
(engine + tenancy + defaults).

The tools keep JiuwenMemory's MCP names, arguments and reply shapes (``{"results": [...],
"count": n}`` for searches and pages, ``{"status": ...}`` for writes), so its MCP users switch by
changing the server they point at. Memory types and ``var:<name>`` ids mean what they mean on
the JiuwenMemory REST routes (``routes``; the operations both perform are in ``common``).

Ids are cleaned the way JiuwenMemory's MCP server cleans them: trimmed, ``/`` and ``\\``
replaced by ``_``, cut to 128 characters; an empty id means the default.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from omoide.api.deps import Tenancy
from omoide.api.health import health_view
from omoide.compat.jiuwen.common import (
    EPISODIC,
    SEMANTIC,
    SUMMARY,
    USER_PROFILE,
    VAR_PREFIX,
    VARIABLE,
    default_threshold,
    delete_by_id,
    llm_off,
    long_term,
    memory_type,
    page,
    search_recipe,
    type_warning,
    update_by_id,
    wire_type,
)
from omoide.config import Settings
from omoide.errors import InvalidInput
from omoide.memory import Memory
from omoide.types import DEFAULT_ID, UNNAMED_SESSION, MemoryType, Message, Scope, SearchFilters
from omoide.validate import check_ids

MAX_ID = 128
EXTRACTED_TYPES = (USER_PROFILE, SEMANTIC, EPISODIC, SUMMARY)  # the lists of upstream's add reply
ADD_WAIT_S = 30.0  # add_messages replies when extraction finished, or after this long


def clean_id(value: str | None) -> str | None:
    """JiuwenMemory's id rule; ``None`` for an empty id.

    >>> clean_id("  team/alpha\\\\x "), clean_id("   "), len(clean_id("a" * 300) or "")
    ('team_alpha_x', None, 128)
    """
    if value is None:
        return None
    cleaned = value.strip().replace("\\", "_").replace("/", "_")[:MAX_ID]
    return cleaned or None


def defaults(settings: Settings) -> tuple[str, str, str]:
    """A deployment's ``Caller`` defaults: the user and scope of calls that name none, and the
    recipe of searches (the compat interface's, shared with its REST routes)."""
    return (
        settings.compat.mcp_default_user_id,
        settings.compat.mcp_default_scope_id,
        search_recipe(settings),
    )


@dataclass(frozen=True)
class Caller:
    """Who calls: the engine, the key's tenancy, the deployment's default ids, and the recipe
    of searches that name none (``search_recipe``: the server's default, as every door, unless
    the deployment keeps upstream's cosine)."""

    engine: Memory
    tenancy: Tenancy
    default_user_id: str
    default_scope_id: str
    recipe: str

    def scope(self, user_id: str | None, scope_id: str | None) -> Scope:
        """The tenant of a call. A bound key fixes the user (naming another is ``Forbidden``);
        otherwise an omitted id is the deployment's default."""
        user, scope = clean_id(user_id), clean_id(scope_id)
        check_ids(user, scope)
        default_scope = clean_id(self.default_scope_id) or DEFAULT_ID
        bound = self.tenancy.bound
        if bound is None:
            default_user = clean_id(self.default_user_id) or DEFAULT_ID
            return Scope(user_id=user or default_user, scope_id=scope or default_scope)
        if scope is None and bound.scope_id is None:
            scope = default_scope
        return self.tenancy.scope(user, scope)

    def tenant(self, user_id: str | None, scope_id: str | None) -> dict[str, Any]:
        return self.scope(user_id, scope_id).model_dump()


def _message(index: int, raw: Any) -> Message:
    """One message; a non-string role or content is refused (``str()`` stored a Python repr
    such as ``{'a': 1}`` as if the user had said it)."""
    if not isinstance(raw, dict):
        raise InvalidInput(f"messages[{index}] must be a {{role, content}} object")
    role, content = raw.get("role") or "user", raw.get("content", "")
    for name, value in (("role", role), ("content", content)):
        if not isinstance(value, str):
            raise InvalidInput(
                f"messages[{index}].{name} must be a string, got {type(value).__name__}"
            )
    return Message(role=role, content=content)


def add_messages(
    caller: Caller,
    messages: list[dict[str, Any]],
    user_id: str | None,
    scope_id: str | None,
    infer: bool,
    session_id: str | None,
) -> dict[str, Any]:
    if not isinstance(messages, list) or not messages:
        raise InvalidInput("messages must be a non-empty list of {role, content} objects")
    parsed = [_message(index, m) for index, m in enumerate(messages)]
    result = caller.engine.add_messages(
        [m for m in parsed if m.content.strip()] or parsed,
        **caller.tenant(user_id, scope_id),
        session_id=session_id or UNNAMED_SESSION,
        enable_long_term_mem=infer,
        wait=infer,
        timeout=ADD_WAIT_S,
    )
    extracted = [_hit(item.id, item.text, wire_type(item.type)) for item in result.extracted]
    return {
        "status": "added",
        "infer": infer,
        "added": [item.id for item in result.items],
        "extraction": result.extraction.model_dump(mode="json"),
        "extracted": extracted,
        # upstream's reply: what was extracted, one list per type (no mem_variables are
        # declared through this tool, so no variables, as upstream)
        **{kind: [h for h in extracted if h["type"] == kind] for kind in EXTRACTED_TYPES},
        "variables": [],
    }


def _hit(mem_id: str, content: str, kind: str, **extra: Any) -> dict[str, Any]:
    return {"mem_id": mem_id, "content": content, "type": kind, **extra}


def search(
    caller: Caller,
    query: str,
    types: list[MemoryType],
    num: int,
    threshold: float | None,
    user_id: str | None,
    scope_id: str | None,
    recipe: str | None = None,
) -> dict[str, Any]:
    tenant = caller.tenant(user_id, scope_id)
    recipe = recipe or caller.recipe
    result = caller.engine.search(
        query,
        **tenant,
        filters=SearchFilters(types=types),
        limit=num,
        threshold=default_threshold(recipe) if threshold is None else threshold,
        recipe=recipe,
    )
    if result.hits:  # a hit is a use, as on the REST search routes (compat.jiuwen.meta)
        caller.engine.touch_memories([h.memory.id for h in result.hits], **tenant)
    hits = [
        _hit(h.memory.id, h.memory.text, wire_type(h.memory.type), score=h.score)
        for h in result.hits
    ]
    return {"results": hits, "count": len(hits), "warnings": result.warnings}


def search_memories(
    caller: Caller, query: str, num: int, threshold: float | None, recipe: str | None, **ids: Any
) -> Any:
    types = long_term(llm_off(caller.engine))
    return search(caller, query, types, num, threshold, **ids, recipe=recipe)


def search_history_summaries(
    caller: Caller, query: str, num: int, threshold: float | None, recipe: str | None, **ids: Any
) -> Any:
    return search(caller, query, [MemoryType.SUMMARY], num, threshold, **ids, recipe=recipe)


def get_memories(
    caller: Caller,
    page_size: int,
    page_idx: int,
    kind_name: str,
    user_id: str | None,
    scope_id: str | None,
) -> dict[str, Any]:
    """One page, newest first; variables (``var:<name>``) after the memories, by name."""
    if page_size < 1 or page_idx < 1:
        raise InvalidInput("page_size and page_idx must be at least 1")
    tenant = caller.tenant(user_id, scope_id)
    memories, variables, total = page(
        caller.engine, memory_type(kind_name), page_size, page_idx, tenant
    )
    items = [
        _hit(m.id, m.text, wire_type(m.type), timestamp=m.created_at.isoformat()) for m in memories
    ]
    items += [
        _hit(f"{VAR_PREFIX}{name}", f"{name}: {text}", VARIABLE, timestamp=None)
        for name, text in variables
    ]
    # a type upstream does not know lists every type, as upstream's; the REST route says so
    # in a header, the tool in its reply (as a search's warnings)
    warnings = [warning] if (warning := type_warning(kind_name)) else []
    reply = {"results": items, "count": len(items), "total": total, "page_idx": page_idx}
    return {**reply, "warnings": warnings}


def update_memory(caller: Caller, mem_id: str, memory: str, **ids: Any) -> dict[str, Any]:
    update_by_id(caller.engine, mem_id, memory, caller.tenant(**ids))
    return {"status": "updated", "mem_id": mem_id}


def delete_memory(caller: Caller, mem_id: str, **ids: Any) -> dict[str, Any]:
    delete_by_id(caller.engine, mem_id, caller.tenant(**ids))
    return {"status": "deleted", "mem_id": mem_id}


def delete_all_memories(
    caller: Caller, scope_id: str | None, confirm: bool, user_id: str | None
) -> dict[str, Any]:
    """Everything under a scope: of every user (JiuwenMemory's meaning) for a full-access
    caller who names no user, else of the one user. Refused unless ``confirm`` is true."""
    if confirm is not True:
        return {
            "status": "aborted",
            "reason": "confirm must be true to delete all memories in a scope "
            "(this action is irreversible)",
            "scope_id": caller.scope(None, scope_id).scope_id,
        }
    if caller.tenancy.bound is None and clean_id(user_id) is None:
        scope = caller.scope(None, scope_id).scope_id
        return {
            "status": "deleted",
            "scope_id": scope,
            "deleted": caller.engine.delete_scope_id(scope),
        }
    tenant = caller.tenant(user_id, scope_id)
    deleted = caller.engine.delete_all(**tenant)
    return {"status": "deleted", **tenant, "deleted": deleted}


def health_check(caller: Caller) -> dict[str, Any]:
    """What ``GET /health`` shows this caller's key (``omoide.api.health``)."""
    view = health_view(caller.engine, caller.tenancy)
    return {"ready": view["store"].get("status") != "down", **view}


# variables -----------------------------------------------------------------------------------
def get_variables(caller: Caller, names: list[str] | None, **ids: Any) -> dict[str, Any]:
    return {"variables": caller.engine.get_variables(names, **caller.tenant(**ids))}


def update_variables(caller: Caller, variables: dict[str, Any], **ids: Any) -> dict[str, Any]:
    """An empty ``variables`` changes nothing, as upstream and the REST route."""
    if not isinstance(variables, dict):
        raise InvalidInput("variables must be an object of name: value")
    tenant = caller.tenant(**ids)
    written = caller.engine.update_variables(variables, **tenant) if variables else {}
    return {"status": "updated", "variables": written}


def delete_variables(caller: Caller, names: list[str], **ids: Any) -> dict[str, Any]:
    """Upstream's reply; ``deleted`` lists the names that existed (upstream's is ``true``)."""
    deleted = caller.engine.delete_variables(names, **caller.tenant(**ids))
    return {"status": "deleted", "deleted": deleted, "names": names}


# omoide's own ----------------------------------------------------------------------------------
def get_context(
    caller: Caller, query: str, token_budget: int, session_id: str | None, **ids: Any
) -> dict[str, Any]:
    result = caller.engine.context(
        query, **caller.tenant(**ids), session_id=session_id, token_budget=token_budget
    )
    return result.model_dump(mode="json")


def graph_neighborhood(caller: Caller, entity: str, depth: int, **ids: Any) -> dict[str, Any]:
    """``entity`` is an entity's name (any case) or id; a name is looked up first."""
    tenant = caller.tenant(**ids)
    wanted = entity.strip().casefold()
    if not wanted:
        raise InvalidInput("entity must be an entity name or id")
    found = caller.engine.search_entities(entity, **tenant, limit=20).hits
    named = [h.entity for h in found if h.entity.name.casefold() == wanted]
    entity_id = named[0].id if named else entity.strip()
    return caller.engine.neighborhood(entity_id, depth, **tenant).model_dump(mode="json")


def list_sessions(caller: Caller, limit: int, offset: int, **ids: Any) -> dict[str, Any]:
    items, total = caller.engine.list_sessions(**caller.tenant(**ids), limit=limit, offset=offset)
    return {
        "results": [s.model_dump(mode="json") for s in items],
        "count": len(items),
        "total": total,
    }
