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

from typing import Any, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel, TypeAdapter

from omoide.errors import (
    BackendError,
    Conflict,
    EmbedderError,
    FeatureDisabled,
    Forbidden,
    InvalidInput,
    LLMError,
    MigrationError,
    NotFound,
    OmoideError,
    StoreError,
    Unauthorized,
)
from omoide.types import (
    DEFAULT_ID,
    AddInput,
    Episode,
    HistoryEntry,
    Job,
    JobState,
    MemoryItem,
    MemoryType,
    Message,
    Page,
    Scope,
    SearchFilters,
    SearchResult,
    Session,
)

T = TypeVar("T")

_BY_CODE: dict[str, type[OmoideError]] = {
    cls.code: cls
    for cls in (
        InvalidInput,
        NotFound,
        Conflict,
        Unauthorized,
        Forbidden,
        FeatureDisabled,
        MigrationError,
        BackendError,
        StoreError,
        EmbedderError,
        LLMError,
    )
}
_BY_STATUS: dict[int, type[OmoideError]] = {
    400: InvalidInput,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    413: InvalidInput,
    415: InvalidInput,
    422: InvalidInput,
}


def error_from_response(response: httpx.Response) -> OmoideError:
    """The omoide exception for an HTTP error response (by its error code, else its status)."""
    try:
        body = response.json()
    except ValueError:
        body = {}
    error = body.get("error") if isinstance(body, dict) else None
    error = error if isinstance(error, dict) else {}
    detail = body.get("detail") if isinstance(body, dict) else None
    message = str(error.get("message") or detail or response.reason_phrase or "HTTP error")
    fields = {"status": response.status_code, "request_id": body.get("request_id")}
    status = response.status_code
    cls = _BY_CODE.get(str(error.get("code")))
    if cls is None:
        cls = _BY_STATUS.get(status, BackendError if status >= 500 else InvalidInput)
    if issubclass(cls, BackendError):
        return cls(message, retryable=status in (502, 503, 504), **fields)
    return cls(message, **fields)


def _scope_params(scope: Scope | None) -> dict[str, str]:
    return {} if scope is None else {"user_id": scope.user_id, "scope_id": scope.scope_id}


def _segment(value: str) -> str:
    return quote(value, safe="")


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
    ) -> Any:
        clean = {k: v for k, v in (params or {}).items() if v is not None}
        body = None if json is None else {k: v for k, v in json.items() if v is not None}
        try:
            response = self._http.request(method, path, json=body, params=clean)
        except httpx.TransportError as exc:
            raise BackendError(
                f"cannot reach omoide at {self.base_url}: {exc}", retryable=True
            ) from exc
        if response.status_code >= 400:
            raise error_from_response(response)
        return None if response.status_code == 204 else response.json()

    @staticmethod
    def _parse(kind: type[T], data: Any) -> T:
        return TypeAdapter(kind).validate_python(data)

    @staticmethod
    def _dump(value: BaseModel | None) -> dict[str, Any] | None:
        return None if value is None else value.model_dump(mode="json", exclude_none=True)

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
    ) -> list[MemoryItem]:
        """Store each message as a memory (see ``Memory.add``)."""
        body: dict[str, Any] = {
            "user_id": user_id,
            "scope_id": scope_id,
            "session_id": session_id,
            "metadata": metadata,
            "type": MemoryType(type).value,
        }
        if isinstance(messages, str):
            body["text"] = messages
        elif isinstance(messages, list):
            body["messages"] = [m.model_dump() if isinstance(m, Message) else m for m in messages]
        else:
            raise InvalidInput("messages must be a string or a list of messages")
        data = self._call("POST", "/v1/memories", json=body)
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
        body = {
            "query": query,
            "user_id": user_id,
            "scope_id": scope_id,
            "filters": self._dump(filters),
            "limit": limit,
            "threshold": threshold,
            "recipe": recipe,
        }
        return SearchResult.model_validate(self._call("POST", "/v1/memories/search", json=body))

    def get(
        self, memory_id: str, *, user_id: str | None = None, scope_id: str | None = None
    ) -> MemoryItem:
        params = {"user_id": user_id, "scope_id": scope_id}
        data = self._call("GET", f"/v1/memories/{_segment(memory_id)}", params=params)
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
        params = {"user_id": user_id, "scope_id": scope_id, "limit": limit, "offset": offset}
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
        body = {"text": text, "metadata": metadata, "user_id": user_id, "scope_id": scope_id}
        data = self._call("PATCH", f"/v1/memories/{_segment(memory_id)}", json=body)
        return MemoryItem.model_validate(data)

    def delete(
        self, memory_id: str, *, user_id: str | None = None, scope_id: str | None = None
    ) -> None:
        params = {"user_id": user_id, "scope_id": scope_id}
        self._call("DELETE", f"/v1/memories/{_segment(memory_id)}", params=params)

    def delete_all(self, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID) -> int:
        """Delete everything of one tenant; both ids are always sent (never implied)."""
        params = {"user_id": user_id, "scope_id": scope_id}
        return int(self._call("DELETE", "/v1/memories", params=params)["deleted"])

    def history(
        self, memory_id: str, *, user_id: str | None = None, scope_id: str | None = None
    ) -> list[HistoryEntry]:
        params = {"user_id": user_id, "scope_id": scope_id}
        data = self._call("GET", f"/v1/memories/{_segment(memory_id)}/history", params=params)
        return self._parse(list[HistoryEntry], data)

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
        body = {
            "session_id": session_id,
            "user_id": user_id,
            "scope_id": scope_id,
            "name": name,
            "project": project,
            "metadata": metadata,
        }
        return Session.model_validate(self._call("POST", "/v1/sessions", json=body))

    def get_session(
        self, session_id: str, *, user_id: str | None = None, scope_id: str | None = None
    ) -> Session:
        params = {"user_id": user_id, "scope_id": scope_id}
        data = self._call("GET", f"/v1/sessions/{_segment(session_id)}", params=params)
        return Session.model_validate(data)

    def list_sessions(
        self,
        *,
        user_id: str | None = None,
        scope_id: str | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> tuple[list[Session], int]:
        params = {"user_id": user_id, "scope_id": scope_id, "limit": limit, "offset": offset}
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
        body = {
            "user_id": user_id,
            "scope_id": scope_id,
            "name": name,
            "project": project,
            "metadata": metadata,
        }
        data = self._call("PATCH", f"/v1/sessions/{_segment(session_id)}", json=body)
        return Session.model_validate(data)

    def delete_session(
        self, session_id: str, *, user_id: str | None = None, scope_id: str | None = None
    ) -> int:
        params = {"user_id": user_id, "scope_id": scope_id}
        data = self._call("DELETE", f"/v1/sessions/{_segment(session_id)}", params=params)
        return int(data["deleted"])

    def list_episodes(
        self,
        session_id: str,
        *,
        user_id: str | None = None,
        scope_id: str | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> tuple[list[Episode], int]:
        params = {"user_id": user_id, "scope_id": scope_id, "limit": limit, "offset": offset}
        path = f"/v1/sessions/{_segment(session_id)}/episodes"
        data = self._call("GET", path, params=params)
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
        params: dict[str, Any] = {**_scope_params(scope), "limit": limit, "offset": offset}
        params["state"] = None if state is None else JobState(state).value
        return self._parse(list[Job], self._call("GET", "/v1/jobs", params=params)["items"])

    def job_counts(self, *, scope: Scope | None = None) -> dict[str, int]:
        data = self._call("GET", "/v1/jobs/stats", params=_scope_params(scope))
        return {str(k): int(v) for k, v in data.items()}

    def retry_job(self, job_id: int, *, scope: Scope | None = None) -> Job:
        data = self._call("POST", f"/v1/jobs/{int(job_id)}/retry", params=_scope_params(scope))
        return Job.model_validate(data)

    def health(self, *, probe_embedder: bool = False) -> dict[str, Any]:
        """The server's ``/health`` report (``Memory.health`` plus an overall ``status``)."""
        params = {"probe": "true"} if probe_embedder else None
        try:
            response = self._http.get("/health", params=params)
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
