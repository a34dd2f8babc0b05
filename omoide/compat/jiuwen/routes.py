"""The JiuwenMemory ``memory_server`` routes, as a thin router over the engine's services.

A client written against upstream (openJiuwen-ai/agent-memory, ``jiuwen_memory/server``) keeps
working when pointed at omoide: the same paths (trailing slashes included), request fields,
defaults, type names, response shapes and error prefixes. What each route calls:

    POST /add_messages/                      IngestService.add_messages with an
                                             ExtractionRequest (waits ADD_WAIT_S)
    POST /update_mem_by_id/                  Memory.update (or update_variables, "var:<name>")
    POST /delete_mem_by_id/                  Memory.delete (or delete_variables, "var:<name>")
    POST /batch_delete_mem/                  Memory.delete, per id
    POST /update_variables/                  Memory.update_variables
    POST /delete_variables/                  Memory.delete_variables
    POST /delete_mem_by_scope/               Memory.delete_all, or delete_scope_id without user_id
    POST /get_variables/                     Memory.get_variables
    POST /search_memory/                     Memory.search: user_profile, semantic, episodic
    POST /search_user_history_summary/       Memory.search: summary
    POST /get_user_mem_by_page/              Memory.get_all (+ the variables)
    POST /get_user_mem_by_page_with_total/   the same, with timestamp and source_id
    the message log                          omoide/compat/jiuwen/messages.py
    /admin/mem_meta/* (expired memories)     omoide/compat/jiuwen/meta.py
    dreaming and the scope config store      omoide/compat/jiuwen/dreaming.py

Types go out under upstream's names (``semantic_memory``, ``episodic_memory`` ...; see
``jiuwen_common``). Without an LLM nothing is extracted, so the stored turns themselves are the
episodes: ``raw`` memories are listed and searched as ``episodic_memory``. With
an LLM the extracted types take over and raw turns stay reachable through ``/v1`` only.

Errors: a client error keeps its status and omoide's body (404, 403); a request that does not
validate is FastAPI's standard 422; every other failure is a 500 whose ``detail`` has the
route's prefix, e.g. ``Error searching memory: ...``.
"""

from __future__ import annotations

import logging
from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response
from pydantic import ValidationError

from omoide.api.deps import MemoryDep, TenancyDep
from omoide.compat.jiuwen import dreaming as dreaming_routes
from omoide.compat.jiuwen import messages as message_routes
from omoide.compat.jiuwen import meta as meta_routes
from omoide.compat.jiuwen.common import (
    VAR_PREFIX,
    VARIABLE,
    JiuwenRoute,
    default_threshold,
    delete_by_id,
    failing_as,
    llm_off,
    long_term,
    memory_type,
    native,
    page,
    resolve_scope,
    search_recipe,
    type_warning,
    update_by_id,
    wire_type,
)
from omoide.compat.jiuwen.models import (
    Added,
    AddMessagesRequest,
    BatchDeleted,
    BatchDeleteRequest,
    DeletedScope,
    DeletedVariables,
    DeleteFailure,
    DeleteMemRequest,
    DeleteScopeRequest,
    DeleteVariablesRequest,
    GetVariablesRequest,
    Hit,
    Hits,
    PageRequest,
    SearchRequest,
    Success,
    TimedMemPage,
    TimedPageItem,
    UpdateMemRequest,
    UpdateVariablesRequest,
    Variables,
)
from omoide.errors import InvalidInput, NotFound
from omoide.memory import Memory
from omoide.types import (
    UNNAMED_SESSION,
    ExtractionStatus,
    MemoryItem,
    MemoryType,
    Message,
    SearchFilters,
)

__all__ = ["memory_type", "router"]

log = logging.getLogger("omoide.api")

router = APIRouter(tags=["jiuwen"], route_class=JiuwenRoute)

ADD_WAIT_S = 60.0  # /add_messages/ replies when extraction finished, or after this long
NO_LLM = (
    "no LLM configured (set API_BASE and MODEL_NAME, or OMOIDE_LLM_BASE_URL and "
    "OMOIDE_LLM_MODEL): the messages are stored and found by /search_memory/ and the page "
    "routes as episodic_memory, but nothing is extracted"
)
TYPE_WARNING = "X-Omoide-Warning"


@router.post("/add_messages/")
def add_messages(body: AddMessagesRequest, memory: MemoryDep, tenancy: TenancyDep) -> Added:
    """Store the messages in session `session_id` and extract long-term memories (and
    `mem_variables`) from them.

    Replies once extraction finished (at most 60 s; it goes on in the background after that).
    Without an LLM the messages are stored (and searchable as `episodic_memory`) and
    `extraction.state` is `disabled`, with the reason.
    """
    with failing_as("Error adding messages"):
        scope = resolve_scope(tenancy, body.user_id, body.scope_id)
        variables = body.variables()
        messages = [_message(index, m) for index, m in enumerate(body.messages)]
        messages = [m for m in messages if m.content.strip()]
        if not messages:
            if body.messages:  # as upstream: messages given, none with content, is a 422
                raise InvalidInput(
                    "no message has content: give each message a non-empty content",
                    field="messages",
                )
            status = ExtractionStatus(state="off", reason="no messages given")
            return Added(message="Messages added successfully", extraction=status)
        result = memory.add_messages(
            messages,
            **scope.model_dump(),
            session_id=body.session_id or UNNAMED_SESSION,
            mem_variables=variables,
            enable_long_term_mem=body.enable_long_term_mem,
            enable_user_profile=body.enable_user_profile,
            enable_semantic_memory=body.enable_semantic_memory,
            enable_episodic_memory=body.enable_episodic_memory,
            enable_summary_memory=body.enable_summary_memory,
            enable_graph=True,
            wait=True,
            timeout=ADD_WAIT_S,
            timestamp=body.timestamp,
        )
    extraction = result.extraction
    if extraction.state == "disabled":
        extraction = extraction.model_copy(update={"reason": NO_LLM})
    return Added(message="Messages added successfully", extraction=extraction)


def _message(index: int, raw: dict[str, str]) -> Message:
    """One of ``/add_messages/``'s messages; a ``timestamp`` that is not a time is a 422
    (stored as "said now", it would date every relative date wrongly)."""
    said = raw.get("timestamp") or None
    try:
        return Message(
            role=raw.get("role") or "user", content=raw.get("content", ""), timestamp=said
        )
    except ValidationError as exc:
        raise InvalidInput(
            f"messages[{index}].timestamp {said!r} is not a time: give ISO 8601, e.g. "
            "2023-05-08T13:56:00Z",
            field=f"messages[{index}].timestamp",
        ) from exc


@router.post("/update_mem_by_id/")
def update_mem_by_id(body: UpdateMemRequest, engine: MemoryDep, tenancy: TenancyDep) -> Success:
    """Replace a memory's content (kept in its history); `var:<name>` sets that variable."""
    with failing_as("Error updating memory"):
        scope = resolve_scope(tenancy, body.user_id, body.scope_id)
        update_by_id(engine, body.mem_id, body.memory, scope.model_dump())
    return Success(message=f"Memory {body.mem_id} updated successfully")


@router.post("/delete_mem_by_id/")
def delete_mem_by_id(body: DeleteMemRequest, engine: MemoryDep, tenancy: TenancyDep) -> Success:
    """Delete one memory (its history records the delete); `var:<name>` deletes a variable.
    An id the tenant does not have is a 404."""
    with failing_as("Error deleting memory by id"):
        scope = resolve_scope(tenancy, body.user_id, body.scope_id)
        delete_by_id(engine, body.mem_id, scope.model_dump())
    return Success(message=f"Memory {body.mem_id} deleted successfully")


@router.post("/batch_delete_mem/", response_model_exclude_none=True)
def batch_delete_mem(
    body: BatchDeleteRequest, engine: MemoryDep, tenancy: TenancyDep
) -> BatchDeleted:
    """Delete each id; one that cannot be deleted (unknown, say) is counted in `failed` and
    named in `errors` without stopping the others."""
    with failing_as("Error batch deleting memory"):
        scope = resolve_scope(tenancy, body.user_id, body.scope_id)
        if not body.mem_ids:
            return BatchDeleted(deleted=0, failed=0)
        errors: list[DeleteFailure] = []
        for mem_id in dict.fromkeys(body.mem_ids):
            try:
                delete_by_id(engine, mem_id, scope.model_dump())
            except NotFound as exc:
                errors.append(DeleteFailure(mem_id=mem_id, error=exc.message))
        done = len(dict.fromkeys(body.mem_ids)) - len(errors)
    return BatchDeleted(deleted=done, failed=len(errors), errors=errors)


@router.post("/update_variables/")
def update_variables(
    body: UpdateVariablesRequest, engine: MemoryDep, tenancy: TenancyDep
) -> Success:
    """Set variables; a value is coerced to the type its variable has (or a 422)."""
    with failing_as("Error updating variables"):
        scope = resolve_scope(tenancy, body.user_id, body.scope_id)
        engine.update_variables(body.variables, **scope.model_dump())
    return Success(message="Variables updated successfully")


@router.post("/delete_variables/")
def delete_variables(
    body: DeleteVariablesRequest, engine: MemoryDep, tenancy: TenancyDep
) -> DeletedVariables:
    """Delete variables; `deleted` lists the names that existed."""
    with failing_as("Error deleting variables"):
        scope = resolve_scope(tenancy, body.user_id, body.scope_id)
        deleted = engine.delete_variables(body.names, **scope.model_dump())
    return DeletedVariables(deleted=deleted)


@router.post("/delete_mem_by_scope/")
def delete_mem_by_scope(
    body: DeleteScopeRequest, engine: MemoryDep, tenancy: TenancyDep
) -> DeletedScope:
    """Delete everything under `scope_id`: of `user_id` when given, else of every user.

    A key bound to one user only ever deletes that user's scope.
    """
    with failing_as("Error deleting memory by scope"):
        scope_id = str(native(body.scope_id))
        if body.user_id is None and tenancy.bound is None:
            deleted = engine.delete_scope_id(scope_id)
        else:
            scope = tenancy.scope(native(body.user_id), scope_id)
            deleted = engine.delete_all(**scope.model_dump())
    return DeletedScope(deleted=deleted)


@router.post("/get_variables/")
def get_variables(body: GetVariablesRequest, engine: MemoryDep, tenancy: TenancyDep) -> Variables:
    """The variables named (all when `names` is omitted); unknown names are absent."""
    with failing_as("Error getting variables"):
        scope = resolve_scope(tenancy, body.user_id, body.scope_id)
        found = engine.get_variables(body.names, **scope.model_dump())
    return Variables(variables=found)


def _recipe(request: Request) -> str:
    return search_recipe(request.app.state.settings)


RecipeDep = Annotated[str, Depends(_recipe)]


def _search(
    body: SearchRequest, engine: Memory, tenancy: TenancyDep, recipe: str, summaries: bool
) -> Hits:
    scope = resolve_scope(tenancy, body.user_id, body.scope_id)
    off = llm_off(engine) and not summaries
    types = [MemoryType.SUMMARY] if summaries else long_term(off)
    result = engine.search(
        body.query,
        **scope.model_dump(),
        filters=SearchFilters(types=types),
        limit=body.num,
        threshold=default_threshold(recipe) if body.threshold is None else body.threshold,
        recipe=recipe,
    )
    if result.hits:  # a hit is a use: what expired-memory maintenance counts (compat.jiuwen.meta)
        engine.touch_memories([h.memory.id for h in result.hits], **scope.model_dump())
    return Hits(
        results=[
            Hit(
                mem_id=h.memory.id,
                content=h.memory.text,
                type=wire_type(h.memory.type),
                score=h.score,
            )
            for h in result.hits
        ]
    )


@router.post("/search_memory/")
def search_memory(
    body: SearchRequest, engine: MemoryDep, tenancy: TenancyDep, recipe: RecipeDep
) -> Hits:
    """Search the user's profile, semantic and episodic memories, best first (without an
    LLM: the stored turns too, as episodic_memory)."""
    with failing_as("Error searching memory"):
        return _search(body, engine, tenancy, recipe, summaries=False)


@router.post("/search_user_history_summary/")
def search_user_history_summary(
    body: SearchRequest, engine: MemoryDep, tenancy: TenancyDep, recipe: RecipeDep
) -> Hits:
    """Search the user's conversation summaries, most relevant first."""
    with failing_as("Error searching user history summary"):
        return _search(body, engine, tenancy, recipe, summaries=True)


def _page(
    body: PageRequest, engine: Memory, tenancy: TenancyDep, response: Response
) -> tuple[list[MemoryItem], list[tuple[str, str]], int]:
    """One page: the memories, then (for unknown and variable) the variables, by name."""
    if warning := type_warning(body.memory_type):
        # A prefix only: the whole value (up to the body limit) made a header no client or
        # proxy reads. ascii(): a header is Latin-1 only ("记忆" was a 500).
        log.warning("%s", warning)
        response.headers[TYPE_WARNING] = warning
    scope = resolve_scope(tenancy, body.user_id, body.scope_id).model_dump()
    return page(engine, memory_type(body.memory_type), body.page_size, body.page_idx, scope)


@router.post("/get_user_mem_by_page/")
def get_user_mem_by_page(
    body: PageRequest, engine: MemoryDep, tenancy: TenancyDep, response: Response
) -> TimedMemPage:
    """One page of the user's memories, newest first (variables after them, by name), each
    with its `timestamp` and `source_id`, as upstream's own tests expect; `total` counts every
    match, not only this page."""
    with failing_as("Error getting user memory by page"):
        memories, variables, total = _page(body, engine, tenancy, response)
    return TimedMemPage(results=_timed(memories, variables), total=total)


@router.post("/get_user_mem_by_page_with_total/")
def get_user_mem_by_page_with_total(
    body: PageRequest, engine: MemoryDep, tenancy: TenancyDep, response: Response
) -> TimedMemPage:
    """`/get_user_mem_by_page/`: each memory with its `timestamp` and `source_id`."""
    with failing_as("Error getting user memory by page"):
        memories, variables, total = _page(body, engine, tenancy, response)
    return TimedMemPage(results=_timed(memories, variables), total=total)


def _timed(memories: list[MemoryItem], variables: list[tuple[str, str]]) -> list[TimedPageItem]:
    items = [
        TimedPageItem(
            mem_id=m.id,
            content=m.text,
            type=wire_type(m.type),
            timestamp=m.created_at.isoformat(),
            source_id=_source_id(m),
        )
        for m in memories
    ]
    variable_items = [
        TimedPageItem(
            mem_id=f"{VAR_PREFIX}{name}",
            content=f"{name}: {text}",
            type=VARIABLE,
            timestamp=None,
            source_id=None,
        )
        for name, text in variables
    ]
    return items + variable_items


def _source_id(memory: MemoryItem) -> str | None:
    if memory.type is MemoryType.RAW:
        return memory.id
    return memory.source_episodes[0] if memory.source_episodes else None


# after the routes above, so that GET / lists them in upstream's order
router.include_router(message_routes.router)
router.include_router(dreaming_routes.router)
router.include_router(meta_routes.router)
