"""``Client``: the omoide HTTP API with the same methods and return types as ``Memory``.

Moving from the embedded library to a server is a one-line change::

    memory = Memory()                                            # embedded
    memory = Client("http://127.0.0.1:8000", api_key="secret")   # the same calls, over HTTP

    memory.add("I like jasmine tea", user_id="alice")
    memory.search("what does alice drink?", user_id="alice").hits[0].memory.text

HTTP errors come back as the omoide exceptions: ``NotFound`` (404), ``Unauthorized`` (401),
``Forbidden`` (403), ``Conflict`` (409), ``InvalidInput`` (400, 413, 415, 422) and
``BackendError`` (5xx, or the server cannot be reached). ``user_id`` / ``scope_id`` left as
``None`` mean ``"default"``, or the tenant the API key is bound to.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel, TypeAdapter

from omoide.errors import (
    BackendError,
    Conflict,
    Forbidden,
    InvalidInput,
    NotFound,
    OmoideError,
    Unauthorized,
)
from omoide.interface import MemoryAPI
from omoide.types import (
    DEFAULT_ID,
    AddInput,
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
_STATUS = {400: InvalidInput, 401: Unauthorized, 403: Forbidden, 404: NotFound, 409: Conflict}


def _error_classes(root: type[OmoideError]) -> dict[str, type[OmoideError]]:
    found = {root.code: root}
    for sub in root.__subclasses__():
        found |= _error_classes(sub)
    return found


def error_from_response(response: httpx.Response) -> OmoideError:
    """The omoide exception for an HTTP error response: by its error code, else its status."""
    try:
        body = response.json()
    except ValueError:
        body = None
    body_fields: dict[str, Any] = body if isinstance(body, dict) else {}
    body = body_fields
    found = body_fields.get("error")
    error: dict[str, Any] = found if isinstance(found, dict) else {}
    message = str(error.get("message") or body.get("detail") or response.reason_phrase)
    status = response.status_code
    fields = {"status": status, "request_id": body.get("request_id")}
    cls = _error_classes(OmoideError).get(str(error.get("code")))
    if cls is None:
        cls = BackendError if status >= 500 else _STATUS.get(status, InvalidInput)
    if issubclass(cls, BackendError):
        return cls(message, retryable=status in (502, 503, 504), **fields)
    return cls(message, **fields)


def _ids(user_id: str | None, scope_id: str | None) -> dict[str, str | None]:
    return {"user_id": user_id, "scope_id": scope_id}


def _scope(scope: Scope | None) -> dict[str, str | None]:
    return {} if scope is None else _ids(scope.user_id, scope.scope_id)


def _path(*parts: str | int) -> str:
    return "/" + "/".join(quote(str(p), safe="") for p in parts)


def _json(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, list | tuple):
        return [_json(v) for v in value]
    return value


class Client:
    """A synchronous client for an omoide server. Use it as a context manager, or ``close()``."""

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8000",
        api_key: str | None = None,
        *,
        timeout: float = 60.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.base_url = base_url.rstrip("/")
        self._http = httpx.Client(
            base_url=self.base_url,
            headers=headers,
            timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
            transport=transport,
        )

    # plumbing -------------------------------------------------------------------------
    def _call(
        self,
        method: str,
        path: str,
        *,
        json: dict[str, Any] | None = None,
        params: dict[str, Any] | None = None,
        timeout: float | None = None,
    ) -> Any:
        """One request; ``None`` values are left out, so the server's defaults apply."""
        query = {k: v for k, v in (params or {}).items() if v is not None}
        body = None if json is None else {k: _json(v) for k, v in json.items() if v is not None}
        try:
            if timeout is None:
                response = self._http.request(method, path, json=body, params=query)
            else:
                response = self._http.request(
                    method, path, json=body, params=query, timeout=timeout
                )
        except httpx.TransportError as exc:
            raise BackendError(f"cannot reach omoide at {self.base_url}: {exc}") from exc
        if response.status_code >= 400:
            raise error_from_response(response)
        return None if response.status_code == 204 else response.json()

    @staticmethod
    def _parse(kind: type[T], data: Any) -> T:
        return TypeAdapter(kind).validate_python(data)

    # memories -------------------------------------------------------------------------
    def add(
        self,
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
    ) -> list[MemoryItem]:
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
        data = self._call("POST", "/v1/memories", json=body, timeout=wait_s)
        return self._parse(list[MemoryItem], data["items"])

    def search(
        self,
        query: str,
        *,
        user_id: str | None = None,
        scope_id: str | None = None,
        filters: SearchFilters | None = None,
        limit: int = 10,
        threshold: float | None = None,
        recipe: str | None = None,
    ) -> SearchResult:
        body: dict[str, Any] = {"query": query, **_ids(user_id, scope_id), "filters": filters}
        body |= {"limit": limit, "threshold": threshold, "recipe": recipe}
        return SearchResult.model_validate(self._call("POST", "/v1/memories/search", json=body))

    def get(
        self, memory_id: str, *, user_id: str | None = None, scope_id: str | None = None
    ) -> MemoryItem:
        data = self._call("GET", _path("v1", "memories", memory_id), params=_ids(user_id, scope_id))
        return MemoryItem.model_validate(data)

    def get_all(
        self,
        *,
        user_id: str | None = None,
        scope_id: str | None = None,
        filters: SearchFilters | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> Page:
        params = {**_ids(user_id, scope_id), "limit": limit, "offset": offset}
        if filters is not None:
            params["filters"] = filters.model_dump_json(exclude_none=True)
        return Page.model_validate(self._call("GET", "/v1/memories", params=params))

    def update(
        self,
        memory_id: str,
        text: str | None = None,
        metadata: dict[str, Any] | None = None,
        *,
        user_id: str | None = None,
        scope_id: str | None = None,
    ) -> MemoryItem:
        body = {"text": text, "metadata": metadata, **_ids(user_id, scope_id)}
        data = self._call("PATCH", _path("v1", "memories", memory_id), json=body)
        return MemoryItem.model_validate(data)

    def delete(
        self, memory_id: str, *, user_id: str | None = None, scope_id: str | None = None
    ) -> None:
        self._call("DELETE", _path("v1", "memories", memory_id), params=_ids(user_id, scope_id))

    def delete_all(self, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID) -> int:
        """Delete everything of one tenant; both ids are always sent (never implied)."""
        return int(self._call("DELETE", "/v1/memories", params=_ids(user_id, scope_id))["deleted"])

    def history(
        self, memory_id: str, *, user_id: str | None = None, scope_id: str | None = None
    ) -> list[HistoryEntry]:
        path = _path("v1", "memories", memory_id, "history")
        return self._parse(
            list[HistoryEntry], self._call("GET", path, params=_ids(user_id, scope_id))
        )

    # sessions and episodes ------------------------------------------------------------
    def create_session(
        self,
        session_id: str,
        *,
        user_id: str | None = None,
        scope_id: str | None = None,
        name: str | None = None,
        project: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Session:
        body: dict[str, Any] = {"session_id": session_id, **_ids(user_id, scope_id)}
        body |= {"name": name, "project": project, "metadata": metadata}
        return Session.model_validate(self._call("POST", "/v1/sessions", json=body))

    def get_session(
        self, session_id: str, *, user_id: str | None = None, scope_id: str | None = None
    ) -> Session:
        path = _path("v1", "sessions", session_id)
        return Session.model_validate(self._call("GET", path, params=_ids(user_id, scope_id)))

    def list_sessions(
        self,
        *,
        user_id: str | None = None,
        scope_id: str | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> tuple[list[Session], int]:
        params = {**_ids(user_id, scope_id), "limit": limit, "offset": offset}
        data = self._call("GET", "/v1/sessions", params=params)
        return self._parse(list[Session], data["items"]), int(data["total"])

    def update_session(
        self,
        session_id: str,
        *,
        user_id: str | None = None,
        scope_id: str | None = None,
        name: str | None = None,
        project: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Session:
        body = {**_ids(user_id, scope_id), "name": name, "project": project, "metadata": metadata}
        data = self._call("PATCH", _path("v1", "sessions", session_id), json=body)
        return Session.model_validate(data)

    def delete_session(
        self, session_id: str, *, user_id: str | None = None, scope_id: str | None = None
    ) -> int:
        path = _path("v1", "sessions", session_id)
        return int(self._call("DELETE", path, params=_ids(user_id, scope_id))["deleted"])

    def list_episodes(
        self,
        session_id: str,
        *,
        user_id: str | None = None,
        scope_id: str | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> tuple[list[Episode], int]:
        params = {**_ids(user_id, scope_id), "limit": limit, "offset": offset}
        data = self._call("GET", _path("v1", "sessions", session_id, "episodes"), params=params)
        return self._parse(list[Episode], data["items"]), int(data["total"])

    # jobs and health ------------------------------------------------------------------
    def list_jobs(
        self,
        *,
        scope: Scope | None = None,
        state: JobState | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[Job]:
        params = {**_scope(scope), "limit": limit, "offset": offset}
        params["state"] = None if state is None else JobState(state).value
        return self._parse(list[Job], self._call("GET", "/v1/jobs", params=params)["items"])

    def job_counts(self, *, scope: Scope | None = None) -> dict[str, int]:
        data = self._call("GET", "/v1/jobs/stats", params=_scope(scope))
        return {str(k): int(v) for k, v in data.items()}

    def retry_job(self, job_id: int, *, scope: Scope | None = None) -> Job:
        data = self._call("POST", _path("v1", "jobs", int(job_id), "retry"), params=_scope(scope))
        return Job.model_validate(data)

    def health(self, *, probe_embedder: bool = False) -> dict[str, Any]:
        """The server's ``/health`` report: ``Memory.health`` plus an overall ``status``.

        A server whose store is down answers 503 with the report; that is returned, not raised.
        """
        try:
            response = self._http.get("/health", params={"probe": probe_embedder})
        except httpx.TransportError as exc:
            raise BackendError(f"cannot reach omoide at {self.base_url}: {exc}") from exc
        if response.status_code not in (200, 503):
            raise error_from_response(response)
        report: dict[str, Any] = response.json()
        return report

    # lifecycle ------------------------------------------------------------------------
    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _conforms(client: Client) -> MemoryAPI:
    """Type-checked: ``Client`` implements the shared ``MemoryAPI``."""
    return client
