"""The omoide HTTP API as data: one function per client method, each returning the ``Call``
(method, path, body, query, how to read the reply) that ``Client`` sends with ``httpx.Client``
and ``AsyncClient`` with ``httpx.AsyncClient``.

Building a request is the same for both clients; only sending it differs. Keeping the building
here, once, is what keeps the two from drifting (sync and async twins written apart do).

    >>> call = calls.search("which tea?", user_id="alice", limit=3)
    >>> call.method, call.path, call.json["limit"]
    ('POST', '/v1/memories/search', 3)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Generic, TypeVar
from urllib.parse import quote

from pydantic import BaseModel, TypeAdapter

from omoide.errors import InvalidInput
from omoide.types import (
    DEFAULT_ID,
    AddInput,
    ContextResult,
    Episode,
    HistoryEntry,
    Job,
    JobState,
    MemoryItem,
    MemoryType,
    Page,
    Scope,
    SearchFilters,
    SearchResult,
    Session,
)

if TYPE_CHECKING:
    from omoide.extract import MemVariable

T = TypeVar("T")


@dataclass(frozen=True)
class Call(Generic[T]):
    """One request and how its reply becomes the method's return value.

    ``None`` values in ``json`` and ``params`` are left out, so the server's defaults apply.
    ``accept`` lists error statuses whose body is still the answer (``/health``'s 503).
    """

    method: str
    path: str
    read: Callable[[Any], T]
    json: dict[str, Any] | None = None
    params: dict[str, Any] | None = None
    timeout: float | None = None
    accept: tuple[int, ...] = ()

    def body(self) -> dict[str, Any] | None:
        if self.json is None:
            return None
        return {k: _json(v) for k, v in self.json.items() if v is not None}

    def query(self) -> dict[str, Any]:
        return {k: v for k, v in (self.params or {}).items() if v is not None}


def _json(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, list | tuple):
        return [_json(v) for v in value]
    return value


def _ids(user_id: str | None, scope_id: str | None) -> dict[str, str | None]:
    return {"user_id": user_id, "scope_id": scope_id}


def _scope(scope: Scope | None) -> dict[str, str | None]:
    return {} if scope is None else _ids(scope.user_id, scope.scope_id)


def _path(*parts: str | int) -> str:
    return "/" + "/".join(quote(str(p), safe="") for p in parts)


def _as(kind: type[T]) -> Callable[[Any], T]:
    adapter = TypeAdapter(kind)
    return adapter.validate_python


def _field(kind: type[T], name: str) -> Callable[[Any], T]:
    adapter = TypeAdapter(kind)
    return lambda data: adapter.validate_python(data[name])


def _listing(kind: type[T]) -> Callable[[Any], tuple[list[T], int]]:
    adapter = TypeAdapter(list[kind])  # type: ignore[valid-type]
    return lambda data: (adapter.validate_python(data["items"]), int(data["total"]))


def _none(_data: Any) -> None:
    return None


def _count(data: Any) -> int:
    return int(data["deleted"])


def _report(data: Any) -> dict[str, Any]:
    return dict(data)


# memories -----------------------------------------------------------------------------------
def add(
    messages: AddInput,
    *,
    user_id: str | None = None,
    scope_id: str | None = None,
    session_id: str | None = None,
    metadata: dict[str, Any] | None = None,
    type: MemoryType = MemoryType.RAW,
    infer: bool | None = None,
    mem_variables: Sequence[MemVariable | dict[str, Any]] | None = None,
    enable_long_term_mem: bool = True,
    enable_user_profile: bool = True,
    enable_semantic_memory: bool = True,
    enable_episodic_memory: bool = True,
    enable_summary_memory: bool = True,
    enable_graph: bool = True,
    wait: bool = False,
    timeout: float = 60.0,
    timestamp: datetime | None = None,
) -> Call[list[MemoryItem]]:
    """Store each message as a memory (see ``Memory.add``)."""
    if not isinstance(messages, str | list):
        raise InvalidInput("messages must be a string or a list of messages")
    body = {
        ("text" if isinstance(messages, str) else "messages"): messages,
        **_ids(user_id, scope_id),
        "session_id": session_id,
        "metadata": metadata,
        "type": MemoryType(type).value,
        "infer": infer,
        "mem_variables": None if mem_variables is None else list(mem_variables),
        "enable_long_term_mem": enable_long_term_mem,
        "enable_user_profile": enable_user_profile,
        "enable_semantic_memory": enable_semantic_memory,
        "enable_episodic_memory": enable_episodic_memory,
        "enable_summary_memory": enable_summary_memory,
        "enable_graph": enable_graph,
        "wait": wait,
        "timeout": timeout,
        "timestamp": None if timestamp is None else timestamp.isoformat(),
    }
    wait_s = timeout + 30 if wait else None  # the server may hold the reply that long
    read = _field(list[MemoryItem], "items")
    return Call("POST", "/v1/memories", read, json=body, timeout=wait_s)


def search(
    query: str,
    *,
    user_id: str | None = None,
    scope_id: str | None = None,
    filters: SearchFilters | None = None,
    limit: int = 10,
    threshold: float | None = None,
    recipe: str | None = None,
) -> Call[SearchResult]:
    """The memories most relevant to ``query`` (see ``Memory.search``)."""
    body: dict[str, Any] = {"query": query, **_ids(user_id, scope_id), "filters": filters}
    body |= {"limit": limit, "threshold": threshold, "recipe": recipe}
    return Call("POST", "/v1/memories/search", SearchResult.model_validate, json=body)


def get(
    memory_id: str, *, user_id: str | None = None, scope_id: str | None = None
) -> Call[MemoryItem]:
    """One memory by id (``NotFound`` if it is not the tenant's)."""
    path = _path("v1", "memories", memory_id)
    return Call("GET", path, MemoryItem.model_validate, params=_ids(user_id, scope_id))


def get_all(
    *,
    user_id: str | None = None,
    scope_id: str | None = None,
    filters: SearchFilters | None = None,
    limit: int = 100,
    offset: int = 0,
) -> Call[Page]:
    """A page of the tenant's memories, newest first, with the total count."""
    params: dict[str, Any] = {**_ids(user_id, scope_id), "limit": limit, "offset": offset}
    if filters is not None:
        params["filters"] = filters.model_dump_json(exclude_none=True)
    return Call("GET", "/v1/memories", Page.model_validate, params=params)


def update(
    memory_id: str,
    text: str | None = None,
    metadata: dict[str, Any] | None = None,
    *,
    user_id: str | None = None,
    scope_id: str | None = None,
) -> Call[MemoryItem]:
    """Change a memory's text and/or metadata; the change is recorded in its history."""
    body = {"text": text, "metadata": metadata, **_ids(user_id, scope_id)}
    path = _path("v1", "memories", memory_id)
    return Call("PATCH", path, MemoryItem.model_validate, json=body)


def delete(
    memory_id: str, *, user_id: str | None = None, scope_id: str | None = None
) -> Call[None]:
    """Delete one memory."""
    path = _path("v1", "memories", memory_id)
    return Call("DELETE", path, _none, params=_ids(user_id, scope_id))


def delete_all(*, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID) -> Call[int]:
    """Delete everything of one tenant; both ids are always sent (never implied)."""
    return Call("DELETE", "/v1/memories", _count, params=_ids(user_id, scope_id))


def history(
    memory_id: str, *, user_id: str | None = None, scope_id: str | None = None
) -> Call[list[HistoryEntry]]:
    """A memory's changes, oldest first."""
    path = _path("v1", "memories", memory_id, "history")
    return Call("GET", path, _as(list[HistoryEntry]), params=_ids(user_id, scope_id))


def context(
    query: str,
    *,
    user_id: str | None = None,
    scope_id: str | None = None,
    session_id: str | None = None,
    token_budget: int = 2000,
    recent_turns: int | None = None,
    recipe: str | None = None,
    track_access: bool = True,
) -> Call[ContextResult]:
    """A ready-to-paste block of what is known for ``query`` within ``token_budget`` tokens."""
    body: dict[str, Any] = {"query": query, **_ids(user_id, scope_id), "session_id": session_id}
    body |= {"token_budget": token_budget, "recent_turns": recent_turns, "recipe": recipe}
    body["track_access"] = track_access
    return Call("POST", "/v1/context", ContextResult.model_validate, json=body)


# sessions and episodes ----------------------------------------------------------------------
def create_session(
    session_id: str,
    *,
    user_id: str | None = None,
    scope_id: str | None = None,
    name: str | None = None,
    project: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> Call[Session]:
    """Create a session (``Conflict`` if the id is taken)."""
    body: dict[str, Any] = {"session_id": session_id, **_ids(user_id, scope_id)}
    body |= {"name": name, "project": project, "metadata": metadata}
    return Call("POST", "/v1/sessions", Session.model_validate, json=body)


def get_session(
    session_id: str, *, user_id: str | None = None, scope_id: str | None = None
) -> Call[Session]:
    """One session by its external id."""
    path = _path("v1", "sessions", session_id)
    return Call("GET", path, Session.model_validate, params=_ids(user_id, scope_id))


def list_sessions(
    *,
    user_id: str | None = None,
    scope_id: str | None = None,
    limit: int = 100,
    offset: int = 0,
) -> Call[tuple[list[Session], int]]:
    """A page of the tenant's sessions and their total count."""
    params = {**_ids(user_id, scope_id), "limit": limit, "offset": offset}
    return Call("GET", "/v1/sessions", _listing(Session), params=params)


def update_session(
    session_id: str,
    *,
    user_id: str | None = None,
    scope_id: str | None = None,
    name: str | None = None,
    project: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> Call[Session]:
    """Rename a session or change its project or metadata."""
    body = {**_ids(user_id, scope_id), "name": name, "project": project, "metadata": metadata}
    path = _path("v1", "sessions", session_id)
    return Call("PATCH", path, Session.model_validate, json=body)


def delete_session(
    session_id: str, *, user_id: str | None = None, scope_id: str | None = None
) -> Call[int]:
    """Delete a session with its episodes and memories; the count deleted."""
    path = _path("v1", "sessions", session_id)
    return Call("DELETE", path, _count, params=_ids(user_id, scope_id))


def list_episodes(
    session_id: str,
    *,
    user_id: str | None = None,
    scope_id: str | None = None,
    limit: int = 100,
    offset: int = 0,
) -> Call[tuple[list[Episode], int]]:
    """A page of a session's episodes and their total count."""
    params = {**_ids(user_id, scope_id), "limit": limit, "offset": offset}
    path = _path("v1", "sessions", session_id, "episodes")
    return Call("GET", path, _listing(Episode), params=params)


# jobs and health ----------------------------------------------------------------------------
def list_jobs(
    *,
    scope: Scope | None = None,
    state: JobState | None = None,
    limit: int = 100,
    offset: int = 0,
) -> Call[list[Job]]:
    """Background jobs, newest first."""
    params: dict[str, Any] = {**_scope(scope), "limit": limit, "offset": offset}
    params["state"] = None if state is None else JobState(state).value
    return Call("GET", "/v1/jobs", _field(list[Job], "items"), params=params)


def _counts(data: Any) -> dict[str, int]:
    return {str(k): int(v) for k, v in data.items()}


def job_counts(*, scope: Scope | None = None) -> Call[dict[str, int]]:
    """How many jobs are in each state."""
    return Call("GET", "/v1/jobs/stats", _counts, params=_scope(scope))


def retry_job(job_id: int, *, scope: Scope | None = None) -> Call[Job]:
    """Run a failed job again."""
    path = _path("v1", "jobs", int(job_id), "retry")
    return Call("POST", path, Job.model_validate, params=_scope(scope))


def health(*, probe_embedder: bool = False) -> Call[dict[str, Any]]:
    """The server's ``/health`` report: ``Memory.health`` plus an overall ``status``.

    A server whose store is down answers 503 with the report; that is returned, not raised.
    """
    params = {"probe": probe_embedder}
    return Call("GET", "/health", _report, params=params, accept=(503,))
