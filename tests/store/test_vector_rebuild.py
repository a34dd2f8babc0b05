"""Contract of the vectors of a reindex (staged beside the live ones, then swapped), of the
text check that keeps a stale vector out, and of counting memories without a vector."""

from __future__ import annotations

import numpy as np
import pytest

from omoide.store.ports.admin import AdminReads
from omoide.store.ports.memories import MemoryReads, MemoryWrites
from omoide.store.protocol import Store
from omoide.types import Scope, SearchFilters
from tests.store.contract import ALICE, ALICE_OTHER, BOB, add, covers, unit


def _hits(store: Store, vector: object) -> list[str]:
    return [h for h, _ in store.memories.vector_search(ALICE, vector, SearchFilters(), 5)]  # type: ignore[arg-type]


@covers(MemoryWrites.put_vector, MemoryWrites.update_memory)
def test_a_vector_of_an_old_text_is_not_stored_over_the_new_one(store: Store) -> None:
    memory_id = add(store, ALICE, "penguins")
    with store.transaction() as tx:  # a concurrent update() changed the text and its vector
        tx.memories.update_memory(ALICE, memory_id, "giraffes", None, "t")
        assert tx.memories.put_vector(ALICE, memory_id, unit(0, 1), "giraffes")
    with store.transaction() as tx:  # then a retried embed job of "penguins" finishes
        assert not tx.memories.put_vector(ALICE, memory_id, unit(1, 0), "penguins")
    assert _hits(store, unit(0, 1)) == [memory_id] and _hits(store, unit(1, 0)) == [memory_id]
    [(_, score)] = store.memories.vector_search(ALICE, unit(1, 0), SearchFilters(), 5)
    assert score == pytest.approx(0.0, abs=1e-5)  # still the vector of "giraffes"


@covers(MemoryWrites.stage_vector, MemoryWrites.swap_staged_vectors, MemoryReads.iter_memory_texts)
def test_staged_vectors_are_invisible_until_the_swap(store: Store) -> None:
    first, second, edited = (add(store, ALICE, t) for t in ("tea", "coffee", "milk"))
    late = add(store, BOB, "juice")
    with store.transaction() as tx:
        for memory_id in (first, second, edited):
            tx.memories.put_vector(ALICE, memory_id, unit(1, 0))
        tx.memories.put_vector(BOB, late, unit(1, 0))
        assert tx.memories.stage_vector(ALICE, first, unit(0, 1), "tea")
        assert tx.memories.stage_vector(ALICE, edited, unit(0, 1), "milk")
        assert not tx.memories.stage_vector(ALICE, second, unit(0, 1), "old coffee")
    assert sorted(_hits(store, unit(1, 0))) == sorted([first, second, edited])
    unstaged = [i for c in store.memories.iter_memory_texts(10, unstaged=True) for _, i, _ in c]
    assert unstaged == [second, late]  # a resumed reindex embeds only these
    with store.transaction() as tx:
        tx.memories.update_memory(ALICE, edited, "oat milk", None, "t")  # drops its staged one
        missing = tx.memories.swap_staged_vectors()
    assert missing == [(ALICE, second), (ALICE, edited), (BOB, late)]
    [(hit, score)] = store.memories.vector_search(ALICE, unit(0, 1), SearchFilters(), 5)
    assert hit == first and score == pytest.approx(1.0, abs=1e-5)
    assert [i for c in store.memories.iter_memory_texts(10, unstaged=True) for _, i, _ in c] == [
        first,
        second,
        edited,
        late,
    ]  # the stage is empty again


@covers(MemoryWrites.clear_staged_vectors)
def test_clearing_the_stage_keeps_the_live_vectors(store: Store) -> None:
    memory_id = add(store, ALICE, "tea")
    with store.transaction() as tx:
        tx.memories.put_vector(ALICE, memory_id, unit(1, 0))
        tx.memories.stage_vector(ALICE, memory_id, unit(0, 1), "tea")
    with store.transaction() as tx:
        tx.memories.clear_staged_vectors()
    assert [len(c) for c in store.memories.iter_memory_texts(10, unstaged=True)] == [1]
    assert _hits(store, unit(1, 0)) == [memory_id]


@covers(MemoryReads.unembedded_count)
def test_unembedded_count_per_tenant_and_overall(store: Store) -> None:
    ids = [add(store, ALICE, "tea"), add(store, ALICE, "coffee"), add(store, BOB, "juice")]
    assert store.memories.unembedded_count(ALICE) == 2 and store.memories.unembedded_count() == 3
    with store.transaction() as tx:
        tx.memories.put_vector(ALICE, ids[0], unit(1, 0))
    assert store.memories.unembedded_count(ALICE) == 1
    assert store.memories.unembedded_count(BOB) == 1 and store.memories.unembedded_count() == 2


def _unembedded(store: Store, scope: Scope) -> int:
    """``unembedded_count(scope)``, checked against the figure a vector search reads with its
    hits when the backend gives it (``Nearest.unembedded``)."""
    count = store.memories.unembedded_count(scope)
    read = store.memories.vector_search(scope, unit(1, 0), SearchFilters(), 5).unembedded
    assert read in (None, count)
    return count


@covers(MemoryReads.unembedded_count, MemoryReads.vector_search)
def test_unembedded_count_follows_every_write_of_memories_and_vectors(store: Store) -> None:
    """Each search reports this count: it must stay exact through deletes (the vector goes
    with its memory), text edits (the old vector is dropped), bulk vectors, a vector offered
    for another tenant's memory, the same memory id in another scope, and a whole scope's
    deletion; so must the figure a vector search reads with its hits."""
    tea, coffee, milk = (add(store, ALICE, t) for t in ("tea", "coffee", "milk"))
    other = add(store, ALICE_OTHER, "juice")
    with store.transaction() as tx:
        assert tx.memories.put_vectors(ALICE, [tea, coffee, milk], np.stack([unit(1, 0)] * 3))
        assert not tx.memories.put_vector(BOB, tea, unit(1, 0))  # not Bob's memory
        assert not tx.memories.put_vector(ALICE, other, unit(1, 0))  # another scope's
    counts = (_unembedded(store, ALICE), _unembedded(store, ALICE_OTHER))
    assert counts == (0, 1) and _unembedded(store, BOB) == 0
    with store.transaction() as tx:
        tx.memories.update_memory(ALICE, coffee, "green tea", None, "t")
        tx.memories.delete_memory(ALICE, milk, "t")
    assert _unembedded(store, ALICE) == 1 and store.memories.unembedded_count() == 2
    with store.transaction() as tx:
        tx.memories.put_vector(ALICE, coffee, unit(0, 1))
        tx.memories.put_vector(ALICE, tea, unit(0, 1))  # replacing a vector adds none
    assert _unembedded(store, ALICE) == 0 and store.memories.unembedded_count() == 1
    with store.transaction() as tx:
        tx.admin.delete_scope(ALICE)
    assert _unembedded(store, ALICE) == 0 and store.memories.unembedded_count() == 1
    with store.transaction() as tx:
        tx.memories.clear_vectors()
    assert _unembedded(store, ALICE_OTHER) == 1


@covers(AdminReads.integrity)
def test_a_sound_store_reports_no_integrity_problem(store: Store) -> None:
    add(store, ALICE, "tea")
    assert store.admin.integrity(recheck=True, max_seconds=60) == []
    assert store.admin.integrity() == []
