"""``omoide.AsyncClient`` answers what ``Client`` answers, as coroutines on one event loop."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from omoide import AsyncClient, BackendError, Client, Conflict, NotFound, Unauthorized
from tests.api.conftest import KEY, Running
from tests.api.test_client import _shape, _stable, scenario


class _Blocking:
    """An ``AsyncClient`` whose calls run to completion on one private loop, so the shared
    ``scenario`` (written for the blocking clients) can drive it."""

    def __init__(self, url: str, key: str | None = None) -> None:
        self.loop = asyncio.new_event_loop()
        self.client = AsyncClient(url, api_key=key)

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(self.client, name)
        return lambda *args, **kwargs: self.loop.run_until_complete(method(*args, **kwargs))

    def close(self) -> None:
        self.loop.run_until_complete(self.client.aclose())
        self.loop.close()


@pytest.fixture
def blocking(server: Running) -> Iterator[_Blocking]:
    client = _Blocking(server.url)
    yield client
    client.close()


def test_async_client_returns_what_client_returns(
    start_server: Callable[..., Running], blocking: _Blocking
) -> None:
    other = start_server()
    with other.client() as client:
        expected = scenario(client)
    got = scenario(blocking)
    assert got.keys() == expected.keys()
    for name in expected:
        assert _shape(got[name]) == _shape(expected[name]), name
        if name != "health":
            assert _stable(got[name]) == _stable(expected[name]), name


def test_async_client_has_the_client_methods_as_coroutines() -> None:
    public = [n for n in dir(Client) if not n.startswith("_") and n not in {"close"}]
    for name in public:
        mine, theirs = getattr(AsyncClient, name), getattr(Client, name)
        assert inspect.signature(mine).parameters == inspect.signature(theirs).parameters, name
        assert mine.__doc__ == theirs.__doc__, name
    assert inspect.iscoroutinefunction(AsyncClient(base_url="http://x").search)


def test_async_client_raises_the_omoide_errors(start_server: Callable[..., Running]) -> None:
    server = start_server(api_key=KEY)

    async def run() -> None:
        async with AsyncClient(server.url, api_key=KEY) as client:
            with pytest.raises(NotFound):
                await client.get("no-such-id")
            await client.create_session("dup")
            with pytest.raises(Conflict):
                await client.create_session("dup")
            assert (await client.health())["status"] == "healthy"
        async with AsyncClient(server.url) as anonymous:
            with pytest.raises(Unauthorized):
                await anonymous.get_all()
        async with AsyncClient("http://127.0.0.1:9", timeout=2) as down:
            with pytest.raises(BackendError, match="cannot reach"):
                await down.get_all()

    asyncio.run(run())
