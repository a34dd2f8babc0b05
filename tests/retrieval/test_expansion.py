"""Query expansion by word-vector neighbours (issue 13, point 3): a question's word finds the
memory that says it with another word, through the keyword side too. Since issue 31 the
expansion is part of the ``hybrid_rrf`` recipe (the default ranks each hit by its own
evidence, and expansion words come from the other top hits), so these tests ask for it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from omoide import Memory
from omoide.embed.local import LocalEmbedder
from omoide.retrieval.expansion import expansion_terms
from omoide.store.protocol import NewMemory

RRF = "hybrid_rrf"  # the recipe with the expansion

# 2-d unit vectors: "sofa" and "couch" point the same way, "garden" elsewhere.
AXES = {"sofa": (1.0, 0.0), "couch": (0.96, 0.28), "settee": (0.8, 0.6), "garden": (0.0, 1.0)}


def fake_vectors(words: Sequence[str]) -> dict[str, np.ndarray]:
    return {w: np.asarray(AXES.get(w, (0.6, -0.8)), dtype=np.float32) for w in words}


def test_neighbours_above_the_similarity_nearest_first() -> None:
    texts = ["Bob: the garden couch", "Bob: a settee, really"]
    assert expansion_terms("Where is the sofa?", texts, fake_vectors, 3, 0.7) == [
        "couch",
        "settee",
    ]
    assert expansion_terms("Where is the sofa?", texts, fake_vectors, 1, 0.7) == ["couch"]
    assert expansion_terms("Where is the sofa?", texts, fake_vectors, 3, 0.99) == []


def test_never_a_query_word_or_a_speaker_name() -> None:
    texts = ["Sofa: the couch is new", "Bob: the sofa and the couch"]
    # "sofa" is a speaker here: no seed left, nothing to expand
    assert expansion_terms("Where is the sofa?", texts, fake_vectors, 3, 0.5) == []
    assert "couch" not in expansion_terms("sofa couch?", ["Bob: a couch"], fake_vectors, 3, 0.5)


NOTES = [
    "Bought a second-hand couch for the living room",
    "Waters the garden every morning",
    "Fixed the kitchen tap himself",
    "His sister visits on Sundays",
    "Reads crime novels before bed",
]


def test_a_memory_saying_it_with_another_word_is_found_by_keywords(memory: Memory) -> None:
    memory.add_many([NewMemory(text=t) for t in NOTES], user_id="bob")
    hits = memory.search("Where did he buy his sofa?", user_id="bob", recipe=RRF).hits
    couch = next(h for h in hits if "couch" in h.memory.text)
    # the query's own words do not match it; its expansion ("couch") does
    assert "keyword" not in couch.signals or couch.signals["keyword"].rank > 0
    assert "expansion" in couch.signals and couch.signals["expansion"].rank == 0
    assert hits[0].memory.id == couch.memory.id
    assert all(0.0 <= h.score <= 1.0 for h in hits)
    keyword_only = memory.search("Where did he buy his sofa?", user_id="bob", recipe="keyword")
    assert all("couch" not in h.memory.text for h in keyword_only.hits)
    # the default finds it first too, by its meaning
    default = memory.search("Where did he buy his sofa?", user_id="bob").hits
    assert default[0].memory.id == couch.memory.id


def test_expansion_ignores_other_tenants(memory: Memory) -> None:
    """Ids, order and scores stay the same after another tenant writes and searches the
    same words (its searches fill the shared word-vector cache)."""
    memory.add_many([NewMemory(text=t) for t in NOTES], user_id="bob")

    def snapshot() -> list[tuple[str, float, list[str]]]:
        hits = memory.search("Where did he buy his sofa?", user_id="bob", recipe=RRF).hits
        return [(h.memory.id, h.score, sorted(h.signals)) for h in hits]

    before = snapshot()
    assert any("expansion" in signals for _, _, signals in before)
    other = [NewMemory(text=f"a sofa, a settee and a couch in room {i}") for i in range(40)]
    memory.add_many(other, user_id="carol")
    memory.search("Where is the sofa or the divan?", user_id="carol", recipe=RRF)
    assert snapshot() == before


class CountingEmbedder:
    """The real model, recording every text it is asked to embed."""

    def __init__(self, model: LocalEmbedder, name: str | None = None) -> None:
        self._model = model
        self.name = name or model.name
        self.asked: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.asked.extend(texts)
        return self._model.embed(texts)


def test_no_expansion_with_a_model_it_was_not_calibrated_for(
    tmp_path: Path, embedder: LocalEmbedder
) -> None:
    other = CountingEmbedder(embedder, name="openai-compat/text-embedding-3-small")
    with Memory(tmp_path / "m.db", embedder=other, workers=0) as memory:
        memory.add_many([NewMemory(text=t) for t in NOTES], user_id="bob")
        other.asked.clear()
        hits = memory.search("Where did he buy his sofa?", user_id="bob", recipe=RRF).hits
        assert hits and all("expansion" not in h.signals for h in hits)
        assert other.asked == ["Where did he buy his sofa?"]  # no single words embedded
