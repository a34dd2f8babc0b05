"""``AsyncClient``: ``Client``'s methods as coroutines, over ``httpx.AsyncClient``, for code
that runs in an event loop (agent frameworks' async tools and stores) and must not block it.

    async with AsyncClient("http://127.0.0.1:8000", api_key="secret") as memory:
        await memory.add("I like jasmine tea", user_id="alice")
        (await memory.search("what does alice drink?", user_id="alice")).hits[0].memory.text

Each method takes ``Client``'s arguments and returns what it returns; both build their
requests with ``omoide.calls`` and raise the same omoide errors.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, overload

import httpx

from omoide import calls
from omoide.calls import Call
from omoide.client import as_method, read_reply, unreachable

T = TypeVar("T")
_P = ParamSpec("_P")


class _Send(Generic[_P, T]):
    """An ``AsyncClient`` method: the coroutine sending the ``Call`` that ``build`` makes."""

    def __init__(self, build: Callable[_P, Call[T]]) -> None:
        self._build = build
        self.__doc__ = build.__doc__
        self._unbound = as_method(build, lambda client, call: client._send(call))

    @overload
    def __get__(
        self, obj: None, owner: type[Any]
    ) -> Callable[Concatenate[Any, _P], Coroutine[Any, Any, T]]: ...
    @overload
    def __get__(
        self, obj: AsyncClient, owner: type[Any]
    ) -> Callable[_P, Coroutine[Any, Any, T]]: ...
    def __get__(
        self, obj: AsyncClient | None, owner: type[Any]
    ) -> (
        Callable[Concatenate[Any, _P], Coroutine[Any, Any, T]]
        | Callable[_P, Coroutine[Any, Any, T]]
    ):
        if obj is None:
            return self._unbound
        build = self._build

        async def send(*args: _P.args, **kwargs: _P.kwargs) -> T:
            return await obj._send(build(*args, **kwargs))

        send.__doc__ = self.__doc__
        return send


class AsyncClient:
    """An asynchronous client for an omoide server. ``async with`` it, or ``await aclose()``."""

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8000",
        api_key: str | None = None,
        *,
        timeout: float = 60.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.base_url = base_url.rstrip("/")
        self._http = httpx.AsyncClient(
            base_url=self.base_url,
            headers=headers,
            timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
            transport=transport,
        )

    async def _send(self, call: Call[T]) -> T:
        extra: dict[str, Any] = {} if call.timeout is None else {"timeout": call.timeout}
        try:
            response = await self._http.request(
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
    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
