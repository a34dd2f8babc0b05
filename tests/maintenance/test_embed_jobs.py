"""Embed jobs (memories stored while the embedder was down) are embedded together: one embedder
call for a claimed batch of jobs of any tenants, each memory still getting its own text's
vector, and one text the embedder refuses failing only its own job."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from omoide import EmbedderError, Memory
from omoide.embed import HashEmbedder
from omoide.embed.remote import OpenAICompatEmbedder

POISON = "a text this embedder refuses"


class _Recording:
    """A real HashEmbedder that records each call's texts and refuses any call that contains
    ``POISON`` (as an API answering 400 to one over-long input refuses the whole request)."""

    def __init__(self, retryable: bool = False) -> None:
        self._inner = HashEmbedder()
        self.name = self._inner.name
        self.calls: list[list[str]] = []
        self._retryable = retryable

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        if POISON in texts:
            raise EmbedderError("endpoint answered 400: input rejected", retryable=self._retryable)
        return self._inner.embed(texts)


def _down() -> OpenAICompatEmbedder:
    return OpenAICompatEmbedder("http://127.0.0.1:9/v1", "any", timeout=0.5)


TEXTS = {
    "alice": ["penguins waddle on the ice", "alice bakes sourdough on sundays"],
    "bob": ["bob repairs old bicycles"],
    "carol": ["carol sings in a choir", "the choir meets on thursdays", "tea with lemon"],
}


def _queued(memory: Memory) -> dict[str, str]:
    """Each text of TEXTS added while the embedder is down, one add per text: its memory id."""
    memory.embedder = _down()
    ids = {}
    for user, texts in TEXTS.items():
        for text in texts:
            [item] = memory.add(text, user_id=user, infer=False)
            assert not item.embedded
            ids[text] = item.id
    return ids


def _own_vector(memory: Memory, user: str, text: str, memory_id: str) -> bool:
    [hit, *_] = memory.search(text, user_id=user, recipe="vector").hits
    return hit.memory.id == memory_id and hit.signals["vector"].score > 0.9999


def test_pending_embed_jobs_of_several_tenants_are_embedded_in_one_call(tmp_path: Path) -> None:
    with Memory(tmp_path / "m.db", embedder=HashEmbedder(), workers=0) as memory:
        ids = _queued(memory)
        assert memory.job_counts()["pending"] == len(ids)
        recording = _Recording()
        memory.embedder = recording
        assert memory.run_jobs() == len(ids)
        [call] = recording.calls  # one call for the six jobs of three tenants
        assert sorted(call) == sorted(ids)
        assert memory.job_counts()["pending"] == 0 and memory.job_counts()["done"] == len(ids)
        memory.embedder = HashEmbedder()
        for user, texts in TEXTS.items():
            for text in texts:
                assert memory.get(ids[text], user_id=user).embedded
                assert _own_vector(memory, user, text, ids[text])


def test_a_refused_text_fails_only_its_own_job(tmp_path: Path) -> None:
    with Memory(tmp_path / "m.db", embedder=HashEmbedder(), workers=0) as memory:
        ids = _queued(memory)
        [poisoned] = memory.add(POISON, user_id="bob", infer=False)
        memory.embedder = _Recording(retryable=False)
        memory.run_jobs()
        by_memory = {j.payload["memory_ids"][0]: j for j in memory.list_jobs()}
        assert by_memory[poisoned.id].state.value != "done"
        assert "rejected" in (by_memory[poisoned.id].last_error or "")
        assert not memory.get(poisoned.id, user_id="bob").embedded
        memory.embedder = HashEmbedder()
        for user, texts in TEXTS.items():
            for text in texts:
                assert by_memory[ids[text]].state.value == "done"
                assert _own_vector(memory, user, text, ids[text])


def test_an_outage_during_the_batch_costs_one_call_and_keeps_every_job(tmp_path: Path) -> None:
    with Memory(tmp_path / "m.db", embedder=HashEmbedder(), workers=0) as memory:
        ids = _queued(memory)
        memory.add(POISON, user_id="bob", infer=False)
        recording = _Recording(retryable=True)  # the whole endpoint is down, not one text
        memory.embedder = recording
        memory.run_jobs()
        assert len(recording.calls) == 1  # not one timeout per job
        jobs = memory.list_jobs()
        assert len(jobs) == len(ids) + 1
        assert all(j.state.value == "pending" and j.last_error for j in jobs)
