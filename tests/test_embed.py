"""Embedders: the local model's output, coalescing of concurrent calls, remote endpoints."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from omoide.embed.batching import QUERIES_ARRIVING_S, Coalescer
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


def _held_bulk(held: list[list[str]], gate: threading.Event, entered: threading.Event):
    """An encoder that records its batches and holds the first one until ``gate``."""

    def encode(texts: list[str]) -> np.ndarray:
        held.append(texts)
        if len(held) == 1:
            entered.set()
            assert gate.wait(30), "the test never released the bulk batch"
        return np.array([[float(len(t))] for t in texts], dtype=np.float32)

    return encode


def test_an_urgent_call_runs_beside_the_bulk_batch_in_progress() -> None:
    batches: list[list[str]] = []
    gate, entered = threading.Event(), threading.Event()
    coalescer = Coalescer(_held_bulk(batches, gate, entered), concurrent=True)
    writer = threading.Thread(target=coalescer.embed, args=(["a write", "another write"],))
    writer.start()
    assert entered.wait(30)
    try:
        got = coalescer.embed(["query"], urgent=True)  # the write's batch is still held
        assert got[:, 0].tolist() == [5.0]
        assert writer.is_alive() and not gate.is_set()
        assert batches == [["a write", "another write"], ["query"]]
    finally:
        gate.set()
        writer.join(30)
    assert coalescer.queries_arriving()


def test_an_urgent_call_goes_before_waiting_bulk_calls_and_never_joins_them() -> None:
    batches: list[list[str]] = []
    gate, entered = threading.Event(), threading.Event()
    coalescer = Coalescer(_held_bulk(batches, gate, entered))  # one encode at a time
    first = threading.Thread(target=coalescer.embed, args=(["slice one"],))
    first.start()
    assert entered.wait(30)
    second = threading.Thread(target=coalescer.embed, args=(["slice two"],))
    second.start()
    while coalescer.waiting < 1:  # the second slice is queued before the query
        second.join(0.01)
    results: list[np.ndarray] = []
    query = threading.Thread(target=lambda: results.append(coalescer.embed(["q"], urgent=True)))
    query.start()
    while coalescer.waiting < 2:
        query.join(0.01)
    gate.set()
    for thread in (first, second, query):
        thread.join(30)
    assert batches == [["slice one"], ["q"], ["slice two"]]
    assert results[0][:, 0].tolist() == [1.0]


def test_queries_arrive_for_a_while_after_an_urgent_call() -> None:
    now = [100.0]
    coalescer = Coalescer(
        lambda texts: np.zeros((len(texts), 1), dtype=np.float32), clock=lambda: now[0]
    )
    assert not coalescer.queries_arriving()
    coalescer.embed(["a write"])
    assert not coalescer.queries_arriving()  # bulk calls are not queries
    coalescer.embed(["a query"], urgent=True)
    assert coalescer.queries_arriving()
    now[0] += QUERIES_ARRIVING_S
    assert not coalescer.queries_arriving()


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
