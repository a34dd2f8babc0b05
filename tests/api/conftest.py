"""Real uvicorn servers on ephemeral loopback ports, each in a thread, over real SQLite files."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi import FastAPI

from omoide import Client, Memory
from omoide.config import Settings
from omoide.embed.protocol import Embedder
from omoide.serve.app import create_app

BODY_LIMIT = 64 * 1024
KEY = "s3cret-test-key"


def make_settings(**overrides: Any) -> Settings:
    """Settings independent of the developer's environment for what the API reads."""
    values: dict[str, Any] = {
        "host": "127.0.0.1",
        "port": 0,
        "api_key": None,
        "tenant_keys": {},
        "max_body_bytes": BODY_LIMIT,
    }
    return Settings(**(values | overrides))


class _StoppableServer(uvicorn.Server):
    """``uvicorn.Server`` whose main loop ends as soon as it is told to stop.

    uvicorn's own loop looks at ``should_exit`` between sleeps of a tenth of a second; with
    a live server per test, those waits added up. This loop ticks the same way (``on_tick``
    every tenth of a second) but also wakes when ``stop_now`` is called from another thread.
    """

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self._wake: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()

    async def main_loop(self) -> None:
        with self._lock:
            self._loop = asyncio.get_running_loop()
            self._wake = asyncio.Event()
            if self.should_exit:
                self._wake.set()
        counter = 0
        should_exit = await self.on_tick(counter)
        while not should_exit:
            counter = (counter + 1) % 864000
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), 0.1)
            should_exit = await self.on_tick(counter)

    def stop_now(self) -> None:
        """Ask the server to exit, waking its loop (from any thread)."""
        with self._lock:
            self.should_exit = True
            if self._loop is not None and self._wake is not None:
                with contextlib.suppress(RuntimeError):  # the loop has already closed
                    self._loop.call_soon_threadsafe(self._wake.set)


class LiveServer:
    """``uvicorn.Server`` in a daemon thread on 127.0.0.1, port chosen by the OS."""

    def __init__(self, app: FastAPI, config: uvicorn.Config | None = None) -> None:
        if config is None:
            config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", ws="none")
        self.server = _StoppableServer(config)
        self.thread = threading.Thread(target=self.server.run, name="uvicorn", daemon=True)
        self.url = ""

    def start(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    def stop(self) -> None:
        self.server.stop_now()
        self.thread.join(30)


@dataclass
class Running:
    url: str
    engine: Memory
    settings: Settings

    def http(self, key: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60)

    def client(self, key: str | None = None) -> Client:
        return Client(self.url, api_key=key)


@contextmanager
def running(db: Path, embedder: Embedder, **settings: Any) -> Iterator[Running]:
    """A server over a new ``Memory`` at ``db`` (or over ``engine=``), stopped on exit."""
    engine: Memory = settings.pop("engine", None) or Memory(db, embedder=embedder, workers=1)
    config = make_settings(**settings)
    live = LiveServer(create_app(config, memory=engine)).start()
    try:
        yield Running(live.url, engine, config)
    finally:
        live.stop()
        engine.close()


@pytest.fixture
def start_server(tmp_path: Path, embedder: Embedder) -> Iterator[Callable[..., Running]]:
    """Start servers with ``start_server(api_key=..., engine=...)``; all stop at teardown."""
    numbers = itertools.count()
    with ExitStack() as stack:

        def start(**settings: Any) -> Running:
            db = tmp_path / f"api-{next(numbers)}.db"
            return stack.enter_context(running(db, embedder, **settings))

        yield start


@pytest.fixture
def server(start_server: Callable[..., Running]) -> Running:
    """A server without an API key."""
    return start_server()


@pytest.fixture
def http(server: Running) -> Iterator[httpx.Client]:
    with server.http() as client:
        yield client
