"""MCP through the SDK's own client: a real ``omoide mcp`` subprocess over stdio, and real
uvicorn servers on 127.0.0.1 for streamable HTTP (``tests.api.conftest.running``)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import ExitStack, asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import anyio
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

from omoide.embed.protocol import Embedder
from tests.api.conftest import KEY, Running, running

REPO = Path(__file__).parents[2]
TENANT_KEYS = {
    "alice-key": {"user_id": "alice"},
    "bob-demo-key": {"user_id": "bob", "scope_id": "demo"},
}
T = TypeVar("T")


@asynccontextmanager
async def http_client(url: str, key: str | None = None) -> AsyncIterator[Client]:
    """The SDK client on ``{url}/mcp``, sending ``Authorization: Bearer <key>`` when given."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client,
    ):
        yield client


def run(script: Callable[[], Awaitable[T]]) -> T:
    return anyio.run(script)


def data(result: CallToolResult) -> Any:
    """A tool's reply: its structured content, which its text content repeats as JSON."""
    assert not result.is_error, result.content
    assert result.structured_content is not None
    text = result.content[0].text  # type: ignore[union-attr]
    assert json.loads(text) == result.structured_content
    return result.structured_content


def error(result: CallToolResult) -> str:
    assert result.is_error, result.structured_content
    return str(result.content[0].text)  # type: ignore[union-attr]


@pytest.fixture
def serve(tmp_path: Path, embedder: Embedder) -> Iterator[Callable[..., Running]]:
    """``serve(**settings)``: a live server over a fresh database, stopped at teardown."""
    with ExitStack() as stack:
        count = iter(range(100))

        def start(**settings: Any) -> Running:
            db = tmp_path / f"mcp-{next(count)}.db"
            return stack.enter_context(running(db, embedder, **settings))

        yield start


@pytest.fixture
def keyed(serve: Callable[..., Running]) -> Running:
    return serve(api_key=KEY, tenant_keys=TENANT_KEYS)


def stdio_params(home: Path, db: Path, **env: str) -> StdioServerParameters:
    """``python -m omoide --db DB mcp`` with the model-free embedder and no LLM."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "omoide", "--db", str(db), "mcp"],
        cwd=str(home),
        env={
            "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
            "HOME": str(home),
            "OMOIDE_EMBEDDER": "hash",
            "OMOIDE_LLM_BASE_URL": "",
            "API_BASE": "",
            **env,
        },
    )
