"""Embedders: the local model's output, coalescing of concurrent calls, remote endpoints."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from omoide.embed.batching import Coalescer
from omoide.embed.remote import OllamaEmbedder, OpenAICompatEmbedder
from omoide.errors import EmbedderError


def test_local_model_gives_unit_vectors_that_know_meaning(embedder) -> None:
    tea, coffee, tax = embedder.embed(["I love green tea", "I enjoy coffee", "file the tax return"])
    assert tea.shape == (384,)
    assert np.linalg.norm(tea) == pytest.approx(1.0, abs=1e-5)
    assert tea @ coffee > tea @ tax


def test_concurrent_calls_are_coalesced_and_each_gets_its_own_rows() -> None:
    calls: list[int] = []
    gate = threading.Event()

    def encode(texts: list[str]) -> np.ndarray:
        calls.append(len(texts))
        gate.wait(2)
        return np.array([[float(t)] for t in texts], dtype=np.float32)

    coalescer = Coalescer(encode)
    results: dict[int, np.ndarray] = {}

    def worker(i: int) -> None:
        results[i] = coalescer.embed([str(i), str(i + 0.5)])

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    gate.set()
    for t in threads:
        t.join(10)
    assert sorted(results) == list(range(12))
    for i, rows in results.items():
        assert rows[:, 0].tolist() == [i, i + 0.5]
    assert sum(calls) == 24
    assert len(calls) < 12  # some calls shared a batch


def test_a_failing_batch_fails_its_callers_only() -> None:
    def encode(texts: list[str]) -> np.ndarray:
        if "bad" in texts:
            raise EmbedderError("model crashed")
        return np.zeros((len(texts), 2), dtype=np.float32)

    coalescer = Coalescer(encode)
    with pytest.raises(EmbedderError):
        coalescer.embed(["bad"])
    assert coalescer.embed(["good"]).shape == (1, 2)


def test_openai_compatible_endpoint(fake_llm) -> None:
    embedder = OpenAICompatEmbedder(fake_llm.url, "text-embedding-3-small", api_key="k")
    vectors = embedder.embed(["a", "b", "a"])
    embedder.close()
    assert vectors.shape[0] == 3
    assert np.allclose(vectors[0], vectors[2])
    assert np.linalg.norm(vectors[1]) == pytest.approx(1.0, abs=1e-5)


@pytest.mark.parametrize("fault", ["http_500", "http_429", "malformed"])
def test_openai_compatible_endpoint_faults_are_retryable(fake_llm, fault: str) -> None:
    fake_llm.enqueue_fault(fault, endpoint="embeddings")
    embedder = OpenAICompatEmbedder(fake_llm.url, "m")
    with pytest.raises(EmbedderError) as info:
        embedder.embed(["a"])
    embedder.close()
    assert info.value.retryable


def test_unreachable_endpoints_raise_embedder_errors() -> None:
    for embedder in (
        OpenAICompatEmbedder("http://127.0.0.1:9/v1", "m", timeout=0.5),
        OllamaEmbedder("http://127.0.0.1:9", "m", timeout=0.5),
    ):
        with pytest.raises(EmbedderError, match="unreachable"):
            embedder.embed(["a"])
        embedder.close()
