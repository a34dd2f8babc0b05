"""Search scores mean relevance on one 0..1 scale, and ``threshold`` filters by it (issue 13, 2)."""

from __future__ import annotations

import pytest

from omoide import Memory
from omoide.store.protocol import NewMemory

ALICE_NOTES = [
    "Alice lives in Berlin",
    "Alice likes movies with robots",
    "Alice saw two movies last year and disliked both",
    "Alice has a cat called Miso",
    "Alice works at a bakery on weekends",
    "Alice plays chess with her brother",
]
NONSENSE = ["xylophone quantum banana protocol", "zqv wrtpl mmx", "carburetor hydraulics torque"]


@pytest.fixture
def alice(memory: Memory) -> Memory:
    memory.add_many([NewMemory(text=t) for t in ALICE_NOTES], user_id="alice")
    return memory


@pytest.mark.parametrize("recipe", ["hybrid", "hybrid_weighted", "vector", "keyword"])
def test_nonsense_scores_below_the_default_threshold(alice: Memory, recipe: str) -> None:
    for query in NONSENSE:
        hits = alice.search(query, user_id="alice", recipe=recipe).hits
        assert all(h.score < 0.3 for h in hits), (query, [(h.memory.text, h.score) for h in hits])
        assert alice.search(query, user_id="alice", recipe=recipe, threshold=0.3).hits == []


@pytest.mark.parametrize("recipe", ["hybrid", "hybrid_weighted", "vector"])
def test_a_real_question_passes_the_threshold_best_first(alice: Memory, recipe: str) -> None:
    result = alice.search("What movies does Alice like?", user_id="alice", recipe=recipe)
    scores = [h.score for h in result.hits]
    assert scores == sorted(scores, reverse=True) and all(0.0 <= s <= 1.0 for s in scores)
    assert "movies" in result.hits[0].memory.text
    kept = alice.search(
        "What movies does Alice like?", user_id="alice", recipe=recipe, threshold=0.3
    ).hits
    assert kept and kept[0].memory.id == result.hits[0].memory.id
    assert all(h.score >= 0.3 for h in kept)
    assert [h.memory.id for h in kept] == [h.memory.id for h in result.hits[: len(kept)]]


def test_scores_compare_across_queries(alice: Memory) -> None:
    """A close question's best hit scores higher than a loosely related one's."""
    close = alice.search("Where does Alice live?", user_id="alice").hits[0]
    loose = alice.search("Tell me about European capitals", user_id="alice").hits[0]
    assert close.memory.text == "Alice lives in Berlin"
    assert close.score > loose.score


def test_hybrid_results_ignore_other_tenants(hash_memory: Memory) -> None:
    """Ids, order and scores of alice's search are the same after bob writes a lot."""
    hash_memory.add_many([NewMemory(text=t) for t in ALICE_NOTES], user_id="alice")

    def snapshot() -> list[tuple[str, float]]:
        hits = hash_memory.search("movies robots chess", user_id="alice", limit=10).hits
        return [(h.memory.id, h.score) for h in hits]

    before = snapshot()
    bob = [NewMemory(text=f"movies and robots, chess night {i}") for i in range(300)]
    hash_memory.add_many(bob, user_id="bob")
    assert snapshot() == before
