"""JiuwenMemory endpoints over real HTTP: uvicorn on an ephemeral loopback port in a thread, a
real SQLite file, the real embedding model, and for extraction the real OpenAI-compatible client
talking to the fake server (tests/fakes/openai_server.py)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest

from omoide import Memory
from omoide.embed.protocol import Embedder
from omoide.llm.client import OpenAICompatLLM
from tests.api.conftest import Running, running
from tests.fakes import FakeLLMServer

StartServer = Callable[..., Running]


@pytest.fixture
def start_server(tmp_path: Path, embedder: Embedder) -> Iterator[StartServer]:
    """``start_server(api_key=..., llm=fake, workers=1)``: a server over a new ``Memory``
    (with the fake LLM when ``llm`` is given); every server stops at teardown."""
    numbers = itertools.count()
    with ExitStack() as stack:

        def start(llm: FakeLLMServer | None = None, workers: int = 1, **settings: Any) -> Running:
            db = tmp_path / f"jiuwen-{next(numbers)}.db"
            client = None
            if llm is not None:
                client = OpenAICompatLLM(llm.url, "fake-model", timeout=5.0)
                stack.callback(client.close)
            engine = Memory(db, embedder=embedder, llm=client, workers=workers)
            return stack.enter_context(running(db, embedder, engine=engine, **settings))

        yield start


@pytest.fixture
def server(start_server: StartServer) -> Running:
    """A server without an API key or an LLM."""
    return start_server()


@pytest.fixture
def http(server: Running) -> Iterator[httpx.Client]:
    with server.http() as client:
        yield client


@pytest.fixture
def llm_server(start_server: StartServer, fake_llm: FakeLLMServer) -> Running:
    """A server with an LLM (the fake; searching and paging never call it)."""
    return start_server(llm=fake_llm)


@pytest.fixture
def llm_http(llm_server: Running) -> Iterator[httpx.Client]:
    with llm_server.http() as client:
        yield client
