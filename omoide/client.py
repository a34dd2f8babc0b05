"""``Client``: the omoide HTTP API with ``Memory``'s methods of ``MemoryAPI`` (memories,
sessions, context, jobs, health), the same arguments and return types.

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

import inspect
from collections.abc import Callable
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, overload

import httpx

from omoide import calls
from omoide.calls import Call
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

T = TypeVar("T")
_P = ParamSpec("_P")
_R = TypeVar("_R")
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


class _Send(Generic[_P, T]):
    """A ``Client`` method that sends the ``Call`` one ``omoide.calls`` function builds: the
    function's signature and docstring, with nothing to keep in step by hand."""

    def __init__(self, build: Callable[_P, Call[T]]) -> None:
        self._build = build
        self.__doc__ = build.__doc__
        self._unbound = as_method(build, lambda client, call: client._send(call))

    @overload
    def __get__(self, obj: None, owner: type[Any]) -> Callable[Concatenate[Any, _P], T]: ...
    @overload
    def __get__(self, obj: Client, owner: type[Any]) -> Callable[_P, T]: ...
    def __get__(
        self, obj: Client | None, owner: type[Any]
    ) -> Callable[Concatenate[Any, _P], T] | Callable[_P, T]:
        if obj is None:
            return self._unbound
        build = self._build

        def send(*args: _P.args, **kwargs: _P.kwargs) -> T:
            return obj._send(build(*args, **kwargs))

        send.__doc__ = self.__doc__
        return send


def as_method(
    build: Callable[_P, Call[T]], send: Callable[[Any, Call[T]], _R]
) -> Callable[Concatenate[Any, _P], _R]:
    """``build`` as an unbound method (``self`` first) for ``help()`` and ``inspect``."""

    def method(client: Any, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        return send(client, build(*args, **kwargs))

    signature = inspect.signature(build)
    first = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    method.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[first, *signature.parameters.values()]
    )
    method.__name__ = method.__qualname__ = build.__name__
    method.__doc__ = build.__doc__
    return method


def _failure(response: httpx.Response, call: Call[Any]) -> OmoideError | None:
    if response.status_code >= 400 and response.status_code not in call.accept:
        return error_from_response(response)
    return None


def read_reply(response: httpx.Response, call: Call[T]) -> T:
    """The method's return value from the response, or the omoide error it stands for."""
    if (error := _failure(response, call)) is not None:
        raise error
    return call.read(None if response.status_code == 204 else response.json())


def unreachable(base_url: str, exc: httpx.TransportError) -> BackendError:
    return BackendError(f"cannot reach omoide at {base_url}: {exc}")


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

    def _send(self, call: Call[T]) -> T:
        """One request; the reply read as ``call`` says, or raised as an omoide error."""
        extra: dict[str, Any] = {} if call.timeout is None else {"timeout": call.timeout}
        try:
            response = self._http.request(
                call.method, call.path, json=call.body(), params=call.query(), **extra
            )
        except httpx.TransportError as exc:
            raise unreachable(self.base_url, exc) from exc
        return read_reply(response, call)

    # memories -------------------------------------------------------------------------
    add = _Send(calls.add)
    search = _Send(calls.search)
    get = _Send(calls.get)
    get_all = _Send(calls.get_all)
    update = _Send(calls.update)
    delete = _Send(calls.delete)
    delete_all = _Send(calls.delete_all)
    history = _Send(calls.history)
    context = _Send(calls.context)

    # sessions and episodes ------------------------------------------------------------
    create_session = _Send(calls.create_session)
    get_session = _Send(calls.get_session)
    list_sessions = _Send(calls.list_sessions)
    update_session = _Send(calls.update_session)
    delete_session = _Send(calls.delete_session)
    list_episodes = _Send(calls.list_episodes)

    # jobs and health ------------------------------------------------------------------
    list_jobs = _Send(calls.list_jobs)
    job_counts = _Send(calls.job_counts)
    retry_job = _Send(calls.retry_job)
    health = _Send(calls.health)

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
