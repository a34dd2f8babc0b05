"""The JiuwenMemory ``memory_server`` endpoints, as a thin router over the engine's services.

An existing JiuwenMemory client keeps working when pointed at omoide: the same paths (trailing
slashes included), request fields, defaults and response shapes. What each endpoint calls:

    POST /add_messages/                  IngestService.add_messages with an ExtractionRequest
                                         (session "jiuwen", waits ADD_WAIT_S)
    POST /update_mem_by_id/              Memory.update (or update_variables for "var:<name>")
    POST /update_variables/              Memory.update_variables
    POST /delete_variables/              Memory.delete_variables
    POST /delete_mem_by_scope/           Memory.delete_all, or delete_scope_id without user_id
    POST /get_variables/                 Memory.get_variables
    POST /search_memory/                 Memory.search: user_profile, semantic, episodic
    POST /search_user_history_summary/   Memory.search: summary
    POST /get_user_mem_by_page/          Memory.get_all (+ the variables, for UNKNOWN/variable)

Jiuwen's memory types are omoide's (``user_profile``, ``semantic``, ``episodic``, ``summary``)
plus ``variable`` (omoide's typed variables, listed with the id ``var:<name>``). omoide's own
``raw`` messages and ``chunk`` memories are not Jiuwen types: they are stored and searchable
through ``/v1`` but never returned here. Search uses the ``vector`` recipe, so ``score`` is the
cosine similarity of query and memory and ``threshold`` means what it meant in JiuwenMemory.

Errors: a client error keeps its status and omoide's body (404, 403, 422); every other failure
is a 500 whose ``detail`` has the endpoint's prefix, e.g. ``Error searching memory: ...``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager

from fastapi import APIRouter, HTTPException

from omoide.api.compat.jiuwen_models import (
    Added,
    AddMessagesRequest,
    DeletedScope,
    DeletedVariables,
    DeleteScopeRequest,
    DeleteVariablesRequest,
    GetVariablesRequest,
    Hit,
    Hits,
    MemPage,
    PageItem,
    PageRequest,
    SearchRequest,
    Success,
    UpdateMemRequest,
    UpdateVariablesRequest,
    Variables,
)
from omoide.api.deps import EngineDep, ServicesDep, TenancyDep
from omoide.api.errors import status_for
from omoide.engine import ExtractionRequest
from omoide.errors import NotFound, OmoideError
from omoide.types import MemoryType, Message, SearchFilters, VariableValue

log = logging.getLogger("omoide.api")

router = APIRouter(tags=["jiuwen"])

SESSION = "jiuwen"  # the session every /add_messages/ goes to: its rolling summary is "summary"
ADD_WAIT_S = 60.0  # /add_messages/ replies when extraction finished, or after this long
RECIPE = "vector"
VARIABLE = "variable"
UNKNOWN = "UNKNOWN"
VAR_PREFIX = "var:"
LONG_TERM = [MemoryType.USER_PROFILE, MemoryType.SEMANTIC, MemoryType.EPISODIC]
TYPES: dict[str, list[MemoryType]] = {
    "user_profile": [MemoryType.USER_PROFILE],
    "semantic": [MemoryType.SEMANTIC],
    "episodic": [MemoryType.EPISODIC],
    "summary": [MemoryType.SUMMARY],
    VARIABLE: [],
    UNKNOWN: [*LONG_TERM, MemoryType.SUMMARY],
}


def memory_type(name: str) -> str:
    """A Jiuwen ``MemoryType`` name or value, any case; anything unrecognised is ``UNKNOWN``.

    >>> memory_type("USER_PROFILE"), memory_type("Summary"), memory_type("facts")
    ('user_profile', 'summary', 'UNKNOWN')
    """
    key = name.strip().lower()
    return key if key in TYPES else UNKNOWN


@contextmanager
def failing_as(prefix: str) -> Iterator[None]:
    """Turn a server-side failure into the seed's 500: ``{"detail": "<prefix>: <message>"}``.

    The 500 is the seed's wire contract, not a domain error, so it is an ``HTTPException``
    (``omoide.api.errors`` gives it the common error shape) rather than a new ``OmoideError``.
    """
    try:
        yield
    except OmoideError as exc:
        if status_for(exc) < 500:
            raise  # a client error keeps its status: 404, 403, 422
        log.error("%s: %s: %s", prefix, type(exc).__name__, exc.message)
        raise HTTPException(500, f"{prefix}: {exc.message}") from exc
    except Exception as exc:  # the seed's contract: any failure is a 500 naming its cause
        log.exception("%s", prefix)
        raise HTTPException(500, f"{prefix}: {str(exc) or type(exc).__name__}") from exc


@router.post("/add_messages/")
def add_messages(body: AddMessagesRequest, services: ServicesDep, tenancy: TenancyDep) -> Added:
    """Store the messages and extract long-term memories (and `mem_variables`) from them.

    Replies once extraction finished (at most 60 s; it goes on in the background after that).
    Without an LLM the messages are stored and `extraction.state` is `disabled`.
    """
    with failing_as("Error adding messages"):
        scope = tenancy.scope(body.user_id, body.scope_id)
        messages = [
            Message(role=m.get("role") or "user", content=m.get("content", ""))
            for m in body.messages
        ]
        extraction = ExtractionRequest(
            long_term=body.enable_long_term_mem,
            user_profile=body.enable_user_profile,
            semantic=body.enable_semantic_memory,
            episodic=body.enable_episodic_memory,
            summary=body.enable_summary_memory,
        )
        result = services.ingest.add_messages(
            [m for m in messages if m.content.strip()] or messages,
            **scope.model_dump(),
            session_id=SESSION,
            mem_variables=body.mem_variables,
            extraction=extraction,
            wait=True,
            timeout=ADD_WAIT_S,
        )
    return Added(message="Messages added successfully", extraction=result.extraction)


@router.post("/update_mem_by_id/")
def update_mem_by_id(body: UpdateMemRequest, engine: EngineDep, tenancy: TenancyDep) -> Success:
    """Replace a memory's content (kept in its history); `var:<name>` sets that variable."""
    with failing_as("Error updating memory"):
        scope = tenancy.scope(body.user_id, body.scope_id).model_dump()
        if body.mem_id.startswith(VAR_PREFIX):
            name = body.mem_id.removeprefix(VAR_PREFIX)
            if name not in engine.get_variables([name], **scope):
                raise NotFound(f"variable {name!r} not found", id=body.mem_id)
            engine.update_variables({name: body.memory}, **scope)
        else:
            engine.update(body.mem_id, body.memory, **scope)
    return Success(message=f"Memory {body.mem_id} updated successfully")


@router.post("/update_variables/")
def update_variables(
    body: UpdateVariablesRequest, engine: EngineDep, tenancy: TenancyDep
) -> Success:
    """Set variables; a value is coerced to the type its variable has (or a 422)."""
    with failing_as("Error updating variables"):
        scope = tenancy.scope(body.user_id, body.scope_id)
        engine.update_variables(body.variables, **scope.model_dump())
    return Success(message="Variables updated successfully")


@router.post("/delete_variables/")
def delete_variables(
    body: DeleteVariablesRequest, engine: EngineDep, tenancy: TenancyDep
) -> DeletedVariables:
    """Delete variables; `deleted` lists the names that existed."""
    with failing_as("Error deleting variables"):
        scope = tenancy.scope(body.user_id, body.scope_id)
        deleted = engine.delete_variables(body.names, **scope.model_dump())
    return DeletedVariables(deleted=deleted)


@router.post("/delete_mem_by_scope/")
def delete_mem_by_scope(
    body: DeleteScopeRequest, engine: EngineDep, tenancy: TenancyDep
) -> DeletedScope:
    """Delete everything under `scope_id`: of `user_id` when given, else of every user.

    A key bound to one user only ever deletes that user's scope.
    """
    with failing_as("Error deleting memory by scope"):
        if body.user_id is None and tenancy.bound is None:
            deleted = engine.delete_scope_id(body.scope_id)
        else:
            scope = tenancy.scope(body.user_id, body.scope_id)
            deleted = engine.delete_all(**scope.model_dump())
    return DeletedScope(deleted=deleted)


@router.post("/get_variables/")
def get_variables(body: GetVariablesRequest, engine: EngineDep, tenancy: TenancyDep) -> Variables:
    """The variables named (all when `names` is omitted); unknown names are absent."""
    with failing_as("Error getting variables"):
        scope = tenancy.scope(body.user_id, body.scope_id)
        found = engine.get_variables(body.names, **scope.model_dump())
    return Variables(variables=found)


def _search(
    body: SearchRequest, engine: EngineDep, tenancy: TenancyDep, types: list[MemoryType]
) -> Hits:
    scope = tenancy.scope(body.user_id, body.scope_id)
    result = engine.search(
        body.query,
        **scope.model_dump(),
        filters=SearchFilters(types=types),
        limit=body.num,
        threshold=body.threshold,
        recipe=RECIPE,
    )
    return Hits(
        results=[
            Hit(mem_id=h.memory.id, content=h.memory.text, type=h.memory.type.value, score=h.score)
            for h in result.hits
        ]
    )


@router.post("/search_memory/")
def search_memory(body: SearchRequest, engine: EngineDep, tenancy: TenancyDep) -> Hits:
    """Search the user's profile, semantic and episodic memories, most similar first."""
    with failing_as("Error searching memory"):
        return _search(body, engine, tenancy, LONG_TERM)


@router.post("/search_user_history_summary/")
def search_user_history_summary(
    body: SearchRequest, engine: EngineDep, tenancy: TenancyDep
) -> Hits:
    """Search the user's conversation summaries, most similar first."""
    with failing_as("Error searching user history summary"):
        return _search(body, engine, tenancy, [MemoryType.SUMMARY])


@router.post("/get_user_mem_by_page/")
def get_user_mem_by_page(body: PageRequest, engine: EngineDep, tenancy: TenancyDep) -> MemPage:
    """One page of the user's memories, newest first (variables after them, by name);
    `total` counts every match, not only this page."""
    with failing_as("Error getting user memory by page"):
        scope = tenancy.scope(body.user_id, body.scope_id).model_dump()
        kind = memory_type(body.memory_type)
        offset = (body.page_idx - 1) * body.page_size
        items: list[PageItem] = []
        total = 0
        if TYPES[kind]:
            filters = SearchFilters(types=TYPES[kind])
            page = engine.get_all(**scope, filters=filters, limit=body.page_size, offset=offset)
            items = [PageItem(mem_id=m.id, content=m.text, type=m.type.value) for m in page.items]
            total = page.total
        if kind in (VARIABLE, UNKNOWN):
            variables = sorted(engine.get_variables(None, **scope).items())
            start, room = max(0, offset - total), body.page_size - len(items)
            items += [_variable_item(n, v) for n, v in variables[start : start + room]]
            total += len(variables)
    return MemPage(results=items, total=total)


def _variable_item(name: str, value: VariableValue) -> PageItem:
    text = value if isinstance(value, str) else json.dumps(value)
    return PageItem(mem_id=f"{VAR_PREFIX}{name}", content=f"{name}: {text}", type=VARIABLE)
