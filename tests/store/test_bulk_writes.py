"""Contract of the bulk write path (``add_many``): ``insert_memories`` and ``put_vectors``."""

from __future__ import annotations

import numpy as np
import pytest

from omoide.errors import InvalidInput, NotFound
from omoide.store.ports.memories import MemoryReads, MemoryWrites, NewMemory
from omoide.store.protocol import Store
from omoide.types import HistoryEvent, MemoryType, SearchFilters
from tests.store.contract import (
    ALICE,
    ALICE_OTHER,
    BOB,
    add,
    covers,
    session_with_episodes,
    unit,
)


@covers(MemoryWrites.insert_memories, MemoryReads.latest_memories)
def test_a_batch_is_stored_in_order_with_sessions_sources_and_history(store: Store) -> None:
    [episode] = session_with_episodes(store, ALICE, "s1", ["hello"])
    news = [
        NewMemory(text="first", session_id="s1", source_episodes=[episode, episode]),
        NewMemory(text="second", type=MemoryType.SEMANTIC, metadata={"b": 1, "a": [2]}),
        NewMemory(text="third", created_at_ms=2_000, valid_from_ms=3_000),
    ]
    with store.transaction() as tx:
        items = tx.memories.insert_memories(ALICE, news, "bulk")
    assert [i.text for i in items] == ["first", "second", "third"]
    assert len({i.id for i in items}) == 3
    assert (items[0].session_id, items[0].source_episodes) == ("s1", [episode])
    assert (items[1].type, items[1].metadata) == (MemoryType.SEMANTIC, {"b": 1, "a": [2]})
    assert (items[2].created_at.timestamp(), items[2].valid_from.timestamp()) == (2, 3)
    assert not any(i.embedded for i in items)
    # insertion order is the batch's order: of two rows created at once, the later given is newer
    latest = store.memories.latest_memories(ALICE, SearchFilters(), 3)
    assert [m.id for m in latest] == [items[1].id, items[0].id, items[2].id]
    assert store.memories.get_memories(ALICE, [i.id for i in items]) == items
    for item in items:
        [entry] = store.memories.history(ALICE, item.id)
        assert (entry.event, entry.new_text, entry.actor) == (HistoryEvent.ADD, item.text, "bulk")


@covers(MemoryWrites.insert_memories)
def test_a_batch_reads_back_as_separate_inserts_would(store: Store) -> None:
    one = add(store, ALICE, "tea", metadata={"k": 1})
    with store.transaction() as tx:
        [many] = tx.memories.insert_memories(ALICE, [NewMemory(text="tea", metadata={"k": 1})], "t")
    [single] = store.memories.get_memories(ALICE, [one])
    fields = {"id", "created_at", "updated_at", "valid_from"}
    assert many.model_dump(exclude=fields) == single.model_dump(exclude=fields)
    ranked = store.memories.keyword_search(ALICE, ["tea"], SearchFilters(), 5)
    assert {h[0] for h in ranked} == {one, many.id}


@covers(MemoryWrites.insert_memories)
def test_one_bad_member_rolls_the_whole_batch_back(store: Store) -> None:
    [theirs] = session_with_episodes(store, BOB, "bobs", ["bob's words"])
    bad = [
        NewMemory(text="x", session_id="never-created"),
        NewMemory(text="x", session_id="bobs"),
        NewMemory(text="x", source_episodes=[theirs]),
        NewMemory(text="x", source_episodes=["no-such-episode"]),
    ]
    for member in bad:
        with pytest.raises(NotFound), store.transaction() as tx:
            tx.memories.insert_memories(ALICE, [NewMemory(text="fine"), member], "t")
    assert store.memories.list_memories(ALICE, SearchFilters(), 10, 0) == ([], 0)
    with store.transaction() as tx:
        assert tx.memories.insert_memories(ALICE, [], "t") == []


@covers(MemoryWrites.insert_memories, MemoryReads.vector_search, MemoryReads.unembedded_count)
def test_a_batch_with_its_vectors_is_stored_embedded(store: Store) -> None:
    vectors = [unit(1, 0, 0), unit(0, 1, 0), unit(0, 0, 1)]
    news = [NewMemory(text=f"memory {n}") for n in range(3)]
    with store.transaction() as tx:
        items = tx.memories.insert_memories(ALICE, news, "bulk", np.stack(vectors))
    assert [i.text for i in items] == ["memory 0", "memory 1", "memory 2"]
    assert all(i.embedded for i in items)
    assert store.memories.get_memories(ALICE, [i.id for i in items]) == items
    for item, vector in zip(items, vectors, strict=True):
        [best, *_] = store.memories.vector_search(ALICE, vector, SearchFilters(), 3)
        assert best[0] == item.id and best[1] == pytest.approx(1.0, abs=1e-5)
    assert store.memories.unembedded_count(ALICE) == 0
    assert store.memories.vector_search(BOB, unit(1, 0, 0), SearchFilters(), 3) == []
    with pytest.raises(InvalidInput), store.transaction() as tx:  # a row per memory, or none
        tx.memories.insert_memories(BOB, [NewMemory(text="x")], "bulk", np.stack(vectors))
    assert store.memories.list_memories(BOB, SearchFilters(), 10, 0) == ([], 0)


@covers(MemoryWrites.put_vectors, MemoryReads.vector_search)
def test_put_vectors_stores_each_row_for_its_memory_and_skips_others(store: Store) -> None:
    ids = [add(store, ALICE, f"memory {n}") for n in range(3)]
    bobs = add(store, BOB, "bob's memory")
    vectors = [unit(1, 0, 0), unit(0, 1, 0), unit(0, 0, 1), unit(1, 1, 0)]
    with store.transaction() as tx:
        stored = tx.memories.put_vectors(ALICE, [*ids, bobs], np.stack(vectors))
    assert stored == 3  # bob's memory is not alice's: skipped
    for memory_id, vector in zip(ids, vectors, strict=False):
        [best, *_] = store.memories.vector_search(ALICE, vector, SearchFilters(), 3)
        assert best[0] == memory_id and best[1] == pytest.approx(1.0, abs=1e-5)
    assert store.memories.vector_search(BOB, unit(1, 1, 0), SearchFilters(), 3) == []
    with store.transaction() as tx:  # replacing: the new vector is the one searched
        tx.memories.put_vectors(ALICE, ids[:1], unit(0, 0, 1)[None, :])
    hits = store.memories.vector_search(ALICE, unit(0, 0, 1), SearchFilters(), 3)
    assert {h[0] for h in hits if h[1] > 0.99} == {ids[0], ids[2]}
    assert all(m.embedded for m in store.memories.get_memories(ALICE, ids))


@covers(MemoryReads.vector_search)
def test_vector_search_tells_how_many_vectors_the_tenant_holds(store: Store) -> None:
    """``population``: the tenant's vectors, whatever the filters, the limit or other tenants
    hold (the relevance score's prior reads it from the same search)."""
    ids = [add(store, ALICE, f"memory {n}") for n in range(5)]
    bobs = [add(store, BOB, f"bob's memory {n}") for n in range(2)]
    vectors = np.stack([unit(1, n, 0) for n in range(5)])
    with store.transaction() as tx:
        tx.memories.put_vectors(ALICE, ids, vectors)
        tx.memories.put_vectors(BOB, bobs, vectors[:2])
    hits = store.memories.vector_search(ALICE, unit(1, 0, 0), SearchFilters(), 2)
    assert len(hits) == 2 and hits.population == 5
    none = SearchFilters(session_id="no-such-session")
    assert store.memories.vector_search(ALICE, unit(1, 0, 0), none, 2).population == 5
    assert store.memories.vector_search(BOB, unit(1, 0, 0), SearchFilters(), 9).population == 2
    nobody = store.memories.vector_search(ALICE_OTHER, unit(1, 0, 0), SearchFilters(), 9)
    assert nobody == [] and nobody.population == 0
