"""What every JiuwenMemory route shares: its defaults, type names, 422 and 500 bodies, and the
operations its REST routes and its MCP tools (``tools``) both perform.

Upstream (openJiuwen-ai/agent-memory ``jiuwen_memory/server/memory_server.py``) is a plain
FastAPI app, so a client of it sees FastAPI's standard validation body and ``"__default__"``
for an omitted ``user_id`` / ``scope_id`` / ``session_id``. On these routes ``"__default__"``
is omoide's default tenant id (``"default"``, what ``/v1``, MCP and the CLI use when none is
named): a request's ``"__default__"`` (sent or omitted) reads and writes it, and a reply shows it
as ``"__default__"``, so every door finds what another wrote without naming a tenant.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from typing import Any

from fastapi import HTTPException, Request, Response
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute

from omoide.api.deps import Tenancy
from omoide.api.errors import client_message, status_for
from omoide.config import Settings
from omoide.errors import NotFound, OmoideError
from omoide.memory import Memory
from omoide.types import DEFAULT_ID, MemoryItem, MemoryType, Scope, SearchFilters
from omoide.validate import check_text

log = logging.getLogger("omoide.api")

DEFAULT = "__default__"  # upstream's LongTermMemory.DEFAULT_VALUE


def native(value: str | None) -> str | None:
    """A wire id as omoide stores it: upstream's ``"__default__"`` is omoide's default."""
    return DEFAULT_ID if value == DEFAULT else value


def wire(value: str) -> str:
    """A stored id as upstream's clients know it: omoide's default is ``"__default__"``."""
    return DEFAULT if value == DEFAULT_ID else value


# Upstream's MemoryType values (memory_core/manage/mem_model/memory_unit.py).
USER_PROFILE = "user_profile"
SEMANTIC = "semantic_memory"
EPISODIC = "episodic_memory"
VARIABLE = "variable"
SUMMARY = "summary"
MIDDLE_TERM = "middle_term_memory"
UNKNOWN = "unknown"

VAR_PREFIX = "var:"  # a memory id that names a variable: ``var:<name>``
COSINE_RECIPE = "vector"  # its score is the cosine similarity, which upstream's threshold cut


def search_recipe(settings: Settings) -> str:
    """The recipe of JiuwenMemory's searches (REST and MCP): the server's default one, whose
    score every door shares, unless the deployment keeps upstream's cosine threshold."""
    return COSINE_RECIPE if settings.compat.jiuwen_cosine_threshold else settings.search.recipe


# The threshold of a search whose client sends none. Upstream's default is a cosine
# similarity: a loose cut, which keeps most of what the model finds related. On the relevance
# score (a probability) any cut drops answers an agent needs: an answer its search ranks first
# can score a few percent when the question shares little with it. So a search sent without a
# threshold is the native search's, which cuts nothing and returns each hit with the score a
# client can cut itself (bench/README.md, "The doors' default threshold, again"). A client
# that sends a threshold gets exactly that one.
COSINE_DEFAULT = 0.3
RELEVANCE_DEFAULT = 0.0


def default_threshold(recipe: str) -> float:
    """The threshold of a search of ``recipe`` sent without one: upstream's for a cosine (the
    ``vector`` recipe), none for any other score (as the native search)."""
    return COSINE_DEFAULT if recipe == COSINE_RECIPE else RELEVANCE_DEFAULT


# The name a memory of each omoide type has on the wire. ``raw`` turns only ever reach a
# JiuwenMemory client when no LLM is configured: they are the episodes then.
WIRE_NAMES: dict[MemoryType, str] = {
    MemoryType.USER_PROFILE: USER_PROFILE,
    MemoryType.SEMANTIC: SEMANTIC,
    MemoryType.EPISODIC: EPISODIC,
    MemoryType.RAW: EPISODIC,
    MemoryType.SUMMARY: SUMMARY,
}
# omoide's short names stay accepted as aliases of upstream's.
ALIASES = {"semantic": SEMANTIC, "episodic": EPISODIC}
NAMES = frozenset({USER_PROFILE, SEMANTIC, EPISODIC, VARIABLE, SUMMARY, MIDDLE_TERM, UNKNOWN})


def memory_type(name: str | None) -> str:
    """Upstream's ``MemoryType(name.lower())``, falling back to ``unknown`` as it does.

    >>> memory_type("USER_PROFILE"), memory_type("Semantic"), memory_type("facts")
    ('user_profile', 'semantic_memory', 'unknown')
    """
    key = (name or UNKNOWN).strip().lower()
    key = ALIASES.get(key, key)
    return key if key in NAMES else UNKNOWN


def is_recognised(name: str | None) -> bool:
    key = (name or UNKNOWN).strip().lower()
    return key in NAMES or key in ALIASES


SHOWN_CHARS = 40  # of an unknown memory_type, in the warning


def type_warning(name: str | None) -> str | None:
    """What a page of a ``memory_type`` upstream does not know says: it lists every type, as
    upstream does, and the caller hears why. A prefix of the name only, in ASCII (the REST
    routes send it in a header, which is Latin-1 only)."""
    if is_recognised(name):
        return None
    shown = ascii(str(name)[:SHOWN_CHARS])
    return f"memory_type {shown} is not a JiuwenMemory type; listed every type, as upstream does"


def stored_types(kind: str, llm_off: bool) -> list[MemoryType]:
    """The omoide types a Jiuwen type name lists; ``unknown`` is every one of them."""
    episodic = [MemoryType.EPISODIC, MemoryType.RAW] if llm_off else [MemoryType.EPISODIC]
    table: dict[str, list[MemoryType]] = {
        USER_PROFILE: [MemoryType.USER_PROFILE],
        SEMANTIC: [MemoryType.SEMANTIC],
        EPISODIC: episodic,
        SUMMARY: [MemoryType.SUMMARY],
        VARIABLE: [],
        MIDDLE_TERM: [],  # omoide has no middle-term memory: the type is known and empty
    }
    if kind == UNKNOWN:
        return [MemoryType.USER_PROFILE, MemoryType.SEMANTIC, *episodic, MemoryType.SUMMARY]
    return table[kind]


def long_term(llm_off: bool) -> list[MemoryType]:
    """What ``/search_memory/`` searches: without an LLM the raw turns stand in for episodes."""
    types = [MemoryType.USER_PROFILE, MemoryType.SEMANTIC, MemoryType.EPISODIC]
    return [*types, MemoryType.RAW] if llm_off else types


def llm_off(memory: Memory) -> bool:
    """Without an LLM nothing is extracted: the stored turns are the episodes then."""
    return memory.llm is None


def wire_type(kind: MemoryType) -> str:
    return WIRE_NAMES.get(kind, kind.value)


def update_by_id(memory: Memory, mem_id: str, text: str, tenant: dict[str, Any]) -> None:
    """Replace a memory's text (kept in its history); ``var:<name>`` sets that variable."""
    if mem_id.startswith(VAR_PREFIX):
        name = mem_id.removeprefix(VAR_PREFIX)
        if name not in memory.get_variables([name], **tenant):
            raise NotFound(f"variable {name!r} not found", id=mem_id)
        memory.update_variables({name: text}, **tenant)
    else:
        # checked here to name the argument the caller sent (``memory``; the engine's word
        # is ``text``, which neither the route nor the tool has)
        memory.update(mem_id, check_text(text, memory.max_text_chars, what="memory"), **tenant)


def delete_by_id(memory: Memory, mem_id: str, tenant: dict[str, Any]) -> None:
    """Delete one memory; ``var:<name>`` deletes that variable. An unknown id is ``NotFound``."""
    if mem_id.startswith(VAR_PREFIX):
        name = mem_id.removeprefix(VAR_PREFIX)
        if not memory.delete_variables([name], **tenant):
            raise NotFound(f"variable {name!r} not found", id=mem_id)
    else:
        memory.delete(mem_id, **tenant)


def page(
    memory: Memory, kind: str, page_size: int, page_idx: int, tenant: dict[str, Any]
) -> tuple[list[MemoryItem], list[tuple[str, str]], int]:
    """One page of a Jiuwen type (``memory_type``): the memories, newest first, then (for
    unknown and variable) the variables by name, as ``(name, text)``; the total of all pages."""
    offset = (page_idx - 1) * page_size
    memories: list[MemoryItem] = []
    total = 0
    if types := stored_types(kind, llm_off(memory)):
        filters = SearchFilters(types=types)
        found = memory.get_all(**tenant, filters=filters, limit=page_size, offset=offset)
        memories, total = found.items, found.total
    variables: list[tuple[str, str]] = []
    if kind in (VARIABLE, UNKNOWN):
        named = sorted(memory.get_variables(None, **tenant).items())
        start, room = max(0, offset - total), page_size - len(memories)
        variables = [
            (n, v if isinstance(v, str) else json.dumps(v)) for n, v in named[start : start + room]
        ]
        total += len(named)
    return memories, variables, total


def resolve_scope(tenancy: Tenancy, user_id: str | None, scope_id: str | None) -> Scope:
    """The tenant a request names: an omitted id is ``"__default__"`` (omoide's default), or
    the bound one."""
    bound = tenancy.bound
    if user_id is None and bound is None:
        user_id = DEFAULT
    if scope_id is None and (bound is None or bound.scope_id is None):
        scope_id = DEFAULT
    return tenancy.scope(native(user_id), native(scope_id))


class JiuwenRoute(APIRoute):
    """A route whose request-validation 422 is FastAPI's standard ``{"detail": [...]}`` body,
    as upstream's clients parse it (omoide's own routes answer in omoide's error shape)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def route(request: Request) -> Response:
            try:
                return await handler(request)
            except RequestValidationError as exc:
                return JSONResponse({"detail": jsonable_encoder(exc.errors())}, status_code=422)

        return route


@contextmanager
def failing_as(prefix: str) -> Iterator[None]:
    """Turn a server-side failure into upstream's 500: ``{"detail": "<prefix>: <message>"}``.

    The 500 is upstream's wire contract, not a domain error, so it is an ``HTTPException``
    (``omoide.api.errors`` gives it the common error shape) rather than a new ``OmoideError``.
    """
    try:
        yield
    except OmoideError as exc:
        if status_for(exc) < 500:
            raise  # a client error keeps its status: 404, 403, 422
        log.error("%s: %s: %s", prefix, type(exc).__name__, exc.message)
        raise HTTPException(500, f"{prefix}: {client_message(exc, 500, None)}") from exc
    except HTTPException:
        raise
    except Exception as exc:  # upstream's contract: any failure is a 500 naming its cause
        # The cause is named by its type only: an exception's text can hold SQL, file paths or
        # another tenant's data, so it goes to the server log, never to the caller.
        log.exception("%s", prefix)
        message = f"{prefix}: internal error ({type(exc).__name__}); details are in the server log"
        raise HTTPException(500, message) from exc
