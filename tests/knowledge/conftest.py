"""Fixtures of the knowledge tests: Memories on real SQLite files with the HashEmbedder, with
or without an LLM (the real client on the fake OpenAI-compatible server), and graph builders.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from omoide import Memory
from omoide.api.v1 import knowledge as knowledge_routes
from omoide.cli import app, state
from omoide.config import KnowledgeConfig, Settings
from omoide.embed import HashEmbedder
from omoide.llm.client import OpenAICompatLLM
from omoide.serve.app import create_app
from omoide.types import Entity, Scope, now_ms
from tests.fakes import FakeLLMServer

ALICE = Scope(user_id="alice")
BOB = Scope(user_id="bob")


def open_memory(path: Path, *, llm: OpenAICompatLLM | None = None, **knowledge: Any) -> Memory:
    """A Memory without worker threads (``run_jobs`` runs jobs in the test's thread)."""
    settings = Settings(llm_base_url=None)
    config = KnowledgeConfig(**knowledge) if knowledge else None
    return Memory(
        path, embedder=HashEmbedder(), llm=llm, settings=settings, workers=0, knowledge=config
    )


@pytest.fixture
def plain(tmp_path: Path) -> Iterator[Memory]:
    """A Memory without an LLM."""
    with open_memory(tmp_path / "plain.db") as memory:
        assert memory.llm is None
        yield memory


@pytest.fixture
def mem(tmp_path: Path, llm: OpenAICompatLLM) -> Iterator[Memory]:
    """A Memory with an LLM."""
    with open_memory(tmp_path / "llm.db", llm=llm) as memory:
        yield memory


def summary_reply(fake: FakeLLMServer, text: str) -> None:
    fake.enqueue(json.dumps({"summary": text}))


def build_graph(
    memory: Memory,
    scope: Scope,
    edges: list[tuple[str, str, str]],
    isolated: tuple[str, ...] = (),
    episode_id: str | None = None,
) -> dict[str, Entity]:
    """Entities (type ``thing``) and ``(from, label, to)`` relationships written directly."""
    names = list(dict.fromkeys([n for a, _, b in edges for n in (a, b)] + list(isolated)))
    with memory.store.transaction() as tx:
        found = {n: tx.graph.upsert_entity(scope, n, "thing", now_ms(), episode_id) for n in names}
        for a, label, b in edges:
            tx.graph.upsert_relationship(scope, found[a].id, found[b].id, label, None, now_ms())
    return found


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """``cli(*args) -> (exit code, stdout, stderr)`` on a database in ``tmp_path``."""
    monkeypatch.setenv("OMOIDE_EMBEDDER", "hash")
    monkeypatch.setenv("OMOIDE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("OMOIDE_LLM_BASE_URL", raising=False)
    monkeypatch.delenv("API_BASE", raising=False)
    monkeypatch.chdir(tmp_path)
    state.settings = None
    state.db = None
    runner = CliRunner()

    def invoke(*args: str) -> tuple[int, str, str]:
        result = runner.invoke(app, list(args))
        return result.exit_code, result.stdout, result.stderr

    yield invoke
    state.settings = None


def api_client(memory: Memory) -> TestClient:
    """The app over ``memory``, with the knowledge routes (included here until the app
    registers them itself)."""
    settings = Settings(host="127.0.0.1", api_key=None, tenant_keys={}, llm_base_url=None)
    app = create_app(settings, memory=memory)
    if not any(getattr(route, "path", "") == "/v1/context" for route in app.routes):
        app.include_router(knowledge_routes.router)
    return TestClient(app, base_url="http://127.0.0.1")  # a Host the server answers
