"""The fake server itself: embeddings, recording, and loud failure when unscripted."""

from __future__ import annotations

import httpx
import pytest
from pydantic import BaseModel, SecretStr

from omoide.config import Settings
from omoide.errors import FeatureDisabled, InvalidInput, LLMError
from omoide.llm import build_llm, require_llm
from omoide.llm.client import OpenAICompatLLM
from tests.fakes import FakeLLMServer, hash_vector

pytestmark = pytest.mark.profiles("generic")  # the fake itself, not a server's behaviour


def test_embeddings_are_deterministic(fake_llm: FakeLLMServer) -> None:
    body = {"model": "fake-embed", "input": ["tea", "coffee", "tea"]}
    response = httpx.post(f"{fake_llm.url}/embeddings", json=body)
    data = response.json()["data"]
    assert [d["index"] for d in data] == [0, 1, 2]
    assert len(data[0]["embedding"]) == fake_llm.embedding_dim
    assert data[0]["embedding"] == data[2]["embedding"] == hash_vector("tea", 16)
    assert data[0]["embedding"] != data[1]["embedding"]
    assert response.json()["usage"]["prompt_tokens"] == 3
    assert fake_llm.embedding_requests == [body]


def test_embedding_faults(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue_fault("http_429", endpoint="embeddings")
    response = httpx.post(f"{fake_llm.url}/embeddings", json={"input": "tea"})
    assert response.status_code == 429


def test_context_manager_and_dimension() -> None:
    with FakeLLMServer(embedding_dim=8) as server:
        response = httpx.post(f"{server.url}/embeddings", json={"input": "tea"})
        assert len(response.json()["data"][0]["embedding"]) == 8
        assert server.url.endswith("/v1")


class Answer(BaseModel):
    answer: str


def test_unscripted_call_fails_loudly(fake_llm: FakeLLMServer, llm: OpenAICompatLLM) -> None:
    with pytest.raises(LLMError, match="no scripted reply"):
        require_llm(llm, "fact extraction").complete_json("s", "u", Answer)


def test_build_llm_from_settings(fake_llm: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OMOIDE_LLM_BASE_URL", "API_BASE", "OMOIDE_LLM_MODEL", "MODEL_NAME"):
        monkeypatch.delenv(name, raising=False)
    assert build_llm(Settings()) is None
    with pytest.raises(InvalidInput, match="MODEL"):
        build_llm(Settings(llm_base_url=fake_llm.url))
    llm = build_llm(Settings(llm_base_url=fake_llm.url, llm_model="m", llm_api_key=SecretStr("k")))
    assert llm is not None
    assert llm.name == "openai-compat/m"
    llm.close()


def test_require_llm() -> None:
    with pytest.raises(FeatureDisabled, match="graph extraction needs an LLM"):
        require_llm(None, "graph extraction")
