"""Shared fixtures: real SQLite files in tmp dirs and the real local embedding model."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from omoide import Memory
from omoide.embed import HashEmbedder
from omoide.embed.local import LocalEmbedder
from omoide.embed.onnx import OnnxEmbedder
from omoide.llm.client import OpenAICompatLLM
from tests.fakes import FakeLLMServer

# A background build of the expansion's word table shares embedding batches with the tests'
# own calls and moves their vectors in the last bits (omoide/engine/search/vocabulary.py): searches
# only load a saved table here; tests/engine/test_vocabulary.py builds its tables itself.
os.environ.setdefault("OMOIDE_WORD_TABLE_BUILD", "false")


@pytest.fixture(scope="session")
def embedder() -> LocalEmbedder:
    """all-MiniLM-L6-v2 from the bundled package, loaded once for the whole run."""
    model = LocalEmbedder()
    model.embed(["warm up"])
    return model


@pytest.fixture
def memory(tmp_path: Path, embedder: LocalEmbedder) -> Iterator[Memory]:
    """A Memory on a fresh file with the real model; jobs run only when a test runs them."""
    with Memory(tmp_path / "omoide.db", embedder=embedder, workers=0) as m:
        yield m


@pytest.fixture
def hash_memory(tmp_path: Path) -> Iterator[Memory]:
    """A Memory with the model-free HashEmbedder, for tests about storage, not meaning."""
    with Memory(tmp_path / "omoide.db", embedder=HashEmbedder(), workers=0) as m:
        yield m


@pytest.fixture(scope="session")
def _fake_llm_server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(hang_seconds=20.0) as server:
        yield server


@pytest.fixture
def fake_llm(_fake_llm_server: FakeLLMServer) -> FakeLLMServer:
    """A fake OpenAI-compatible server on loopback, with no scripted replies, faults or
    recorded requests (tests/fakes/openai_server.py)."""
    _fake_llm_server.reset()
    return _fake_llm_server


@pytest.fixture
def llm(fake_llm: FakeLLMServer) -> Iterator[OpenAICompatLLM]:
    """The real LLM client pointed at the fake server; a 1 s timeout for the hang tests."""
    client = OpenAICompatLLM(fake_llm.url, "fake-model", timeout=1.0)
    yield client
    client.close()


@pytest.fixture(scope="session")
def onnx_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache directory for the session, so the model is exported once."""
    return tmp_path_factory.mktemp("onnx-models")


@pytest.fixture(scope="session")
def onnx_embedder(onnx_cache: Path) -> OnnxEmbedder:
    model = OnnxEmbedder(cache_dir=onnx_cache)
    model.embed(["warm up"])
    return model
