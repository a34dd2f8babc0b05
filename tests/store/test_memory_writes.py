"""Contract of ``MemoryWrites``: insert, supersede, invalidate, update, delete, vectors."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from omoide.errors import Conflict, NotFound
from omoide.store.ports.memories import MemoryReads, MemoryWrites, NewMemory
from omoide.store.protocol import Store, Tx
from omoide.types import HistoryEvent, MemoryType, Scope, SearchFilters
from tests.store.contract import ALICE, OTHERS, add, covers, session_with_episodes, unit


def _valid(store: Store, scope: Scope) -> list[str]:
    return [m.id for m in store.memories.list_memories(scope, SearchFilters(), 50, 0)[0]]


@covers(MemoryWrites.insert_memory)
def test_insert_keeps_session_sources_time_and_history(store: Store) -> None:
    [episode] = session_with_episodes(store, ALICE, "s1", ["hello"])
    with store.transaction() as tx:
        item = tx.memories.insert_memory(
            ALICE,
            NewMemory(
                text="hello",
                type=MemoryType.EPISODIC,
                session_id="s1",
                source_episodes=[episode],
                created_at_ms=2_000,
            ),
            "tester",
        )
    assert (item.session_id, item.source_episodes, item.type) == ("s1", [episode], "episodic")
    assert item.created_at == datetime.fromtimestamp(2, UTC) == item.valid_from
    [entry] = store.memories.history(ALICE, item.id)
    assert (entry.event, entry.new_text, entry.actor) == (HistoryEvent.ADD, "hello", "tester")


@covers(MemoryWrites.insert_memory)
def test_insert_into_an_unknown_or_foreign_session_is_not_found(store: Store) -> None:
    session_with_episodes(store, OTHERS[0], "bobs", ["hi"])
    for session_id in ("never-created", "bobs"):
        with pytest.raises(NotFound), store.transaction() as tx:
            tx.memories.insert_memory(ALICE, NewMemory(text="x", session_id=session_id), "t")
    assert _valid(store, ALICE) == []


@covers(MemoryWrites.insert_memory)
def test_a_memory_cannot_cite_an_episode_it_cannot_see(store: Store) -> None:
    [theirs] = session_with_episodes(store, OTHERS[0], "s1", ["bob's words"])
    for episode_id in (theirs, "no-such-episode"):
        with pytest.raises(NotFound), store.transaction() as tx:
            tx.memories.insert_memory(ALICE, NewMemory(text="x", source_episodes=[episode_id]), "t")
    assert _valid(store, ALICE) == []


@covers(MemoryWrites.supersede_memory)
def test_supersede_invalidates_the_old_version_and_links_the_new(store: Store) -> None:
    old = add(store, ALICE, "lives in Osaka", valid_from_ms=1_000)
    with store.transaction() as tx:
        new = tx.memories.supersede_memory(
            ALICE, old, NewMemory(text="lives in Kyoto"), 5_000, "test"
        )
    assert (new.supersedes, new.valid_from, new.invalid_at) == (
        old,
        datetime.fromtimestamp(5, UTC),
        None,
    )
    [before] = store.memories.get_memories(ALICE, [old])
    assert before.invalid_at == datetime.fromtimestamp(5, UTC)
    assert _valid(store, ALICE) == [new.id]
    as_of = SearchFilters(as_of=datetime.fromtimestamp(3, UTC))
    assert [m.id for m in store.memories.list_memories(ALICE, as_of, 10, 0)[0]] == [old]


@covers(MemoryWrites.supersede_memory)
def test_supersede_never_dates_the_new_version_before_the_old(store: Store) -> None:
    old = add(store, ALICE, "likes tea", valid_from_ms=9_000)
    with store.transaction() as tx:
        new = tx.memories.supersede_memory(ALICE, old, NewMemory(text="likes coffee"), 1, "t")
    assert new.valid_from == datetime.fromtimestamp(9, UTC)


@covers(MemoryWrites.supersede_memory)
def test_superseding_an_invalid_memory_is_a_conflict_and_writes_nothing(store: Store) -> None:
    old = add(store, ALICE, "v1")
    with store.transaction() as tx:
        winner = tx.memories.supersede_memory(ALICE, old, NewMemory(text="v2"), 2_000, "t")
    with pytest.raises(Conflict), store.transaction() as tx:
        tx.memories.supersede_memory(ALICE, old, NewMemory(text="v2 again"), 3_000, "t")
    assert _valid(store, ALICE) == [winner.id]


@pytest.mark.parametrize("other", OTHERS)
@covers(
    MemoryWrites.supersede_memory,
    MemoryWrites.invalidate_memory,
    MemoryWrites.update_memory,
    MemoryWrites.set_context,
    MemoryWrites.put_vector,
)
def test_writes_never_touch_another_tenants_memory(store: Store, other: Scope) -> None:
    memory_id = add(store, ALICE, "alice's tea")
    writes: list[Callable[[Tx], object]] = [
        lambda tx: tx.memories.supersede_memory(other, memory_id, NewMemory(text="x"), 1, "t"),
        lambda tx: tx.memories.invalidate_memory(other, memory_id, 1, "t"),
        lambda tx: tx.memories.update_memory(other, memory_id, "hijacked", None, "t"),
    ]
    for write in writes:
        with pytest.raises(NotFound), store.transaction() as tx:
            write(tx)
    with store.transaction() as tx:  # these two ignore ids they cannot see
        tx.memories.set_context(other, memory_id, "hijacked")
        tx.memories.put_vector(other, memory_id, unit(1, 0))
    [item] = store.memories.get_memories(ALICE, [memory_id])
    assert (item.text, item.invalid_at, item.embedded) == ("alice's tea", None, False)
    assert store.memories.keyword_search(ALICE, ["hijacked"], SearchFilters(), 5) == []
    assert store.memories.vector_search(other, unit(1, 0), SearchFilters(), 5) == []


@covers(MemoryWrites.invalidate_memory)
def test_invalidate_hides_the_memory_now_but_keeps_it_for_the_past(store: Store) -> None:
    memory_id = add(store, ALICE, "works at ACME", valid_from_ms=1_000)
    with store.transaction() as tx:
        item = tx.memories.invalidate_memory(ALICE, memory_id, 4_000, "test")
    assert item.invalid_at == datetime.fromtimestamp(4, UTC)
    assert _valid(store, ALICE) == []
    past = SearchFilters(as_of=datetime.fromtimestamp(2, UTC))
    assert [m.id for m in store.memories.list_memories(ALICE, past, 10, 0)[0]] == [memory_id]
    events = [e.event for e in store.memories.history(ALICE, memory_id)]
    assert events == [HistoryEvent.ADD, HistoryEvent.DELETE]
    with pytest.raises(Conflict), store.transaction() as tx:
        tx.memories.invalidate_memory(ALICE, memory_id, 5_000, "test")


@covers(MemoryWrites.last_in_session)
def test_last_in_session_is_the_newest_of_that_type(store: Store) -> None:
    session_with_episodes(store, ALICE, "s1", ["a"])
    session_with_episodes(store, OTHERS[0], "s1", ["b"])
    with store.transaction() as tx:
        assert tx.memories.last_in_session(ALICE, "s1", MemoryType.RAW) is None
    add(store, ALICE, "first", session_id="s1")
    second = add(store, ALICE, "second", session_id="s1", context="ctx")
    add(store, ALICE, "a summary", session_id="s1", type=MemoryType.SUMMARY)
    add(store, OTHERS[0], "bob's newer", session_id="s1")
    with store.transaction() as tx:
        last = tx.memories.last_in_session(ALICE, "s1", MemoryType.RAW)
        assert last is not None and (last.id, last.text, last.context) == (second, "second", "ctx")
        assert tx.memories.last_in_session(ALICE, "other", MemoryType.RAW) is None


@covers(MemoryWrites.latest_turn)
def test_latest_turn_is_the_tenants_latest_by_time_with_its_session(store: Store) -> None:
    with store.transaction() as tx:
        assert tx.memories.latest_turn(ALICE, MemoryType.RAW) is None
    session_with_episodes(store, ALICE, "s1", ["a"])
    first = add(store, ALICE, "first", created_at_ms=5_000)
    add(store, ALICE, "older, inserted later", created_at_ms=4_000)
    add(store, ALICE, "a summary", type=MemoryType.SUMMARY, created_at_ms=9_000)
    add(store, OTHERS[0], "bob's newer", created_at_ms=9_000)
    with store.transaction() as tx:
        latest = tx.memories.latest_turn(ALICE, MemoryType.RAW)
        assert latest is not None
        assert (latest.id, latest.session_id, latest.created_at_ms) == (first, None, 5_000)
    tie = add(store, ALICE, "same time, inserted last", session_id="s1", created_at_ms=5_000)
    with store.transaction() as tx:
        latest = tx.memories.latest_turn(ALICE, MemoryType.RAW)
        assert latest is not None and (latest.id, latest.session_id) == (tie, "s1")


@covers(MemoryWrites.set_context)
def test_set_context_makes_the_memory_findable_by_its_context(store: Store) -> None:
    memory_id = add(store, ALICE, "she said yes")
    with store.transaction() as tx:
        tx.memories.set_context(ALICE, memory_id, "proposal at the lighthouse")
    hits = store.memories.keyword_search(ALICE, ["lighthouse"], SearchFilters(), 5)
    assert [h[0] for h in hits] == [memory_id]
    assert store.memories.get_memories(ALICE, [memory_id])[0].text == "she said yes"


@covers(MemoryWrites.update_memory)
def test_update_records_history_and_drops_stale_vector(store: Store) -> None:
    memory_id = add(store, ALICE, "likes green tea")
    with store.transaction() as tx:
        tx.memories.put_vector(ALICE, memory_id, unit(1, 0))
        item = tx.memories.update_memory(ALICE, memory_id, "likes jasmine tea", None, "test")
    assert item.text == "likes jasmine tea" and not item.embedded
    [_add_entry, update] = store.memories.history(ALICE, memory_id)
    assert (update.event, update.old_text, update.new_text) == (
        HistoryEvent.UPDATE,
        "likes green tea",
        "likes jasmine tea",
    )
    assert store.memories.keyword_search(ALICE, ["green"], SearchFilters(), 5) == []
    assert store.memories.keyword_search(ALICE, ["jasmine"], SearchFilters(), 5)


@covers(MemoryWrites.update_memory)
def test_metadata_only_update_keeps_text_and_vector(store: Store) -> None:
    memory_id = add(store, ALICE, "likes green tea", metadata={"a": 1})
    with store.transaction() as tx:
        tx.memories.put_vector(ALICE, memory_id, unit(1, 0))
        item = tx.memories.update_memory(ALICE, memory_id, None, {"b": 2}, "test")
    assert (item.text, item.metadata, item.embedded) == ("likes green tea", {"b": 2}, True)
    assert store.memories.vector_search(ALICE, unit(1, 0), SearchFilters(), 5)[0][0] == memory_id


@covers(MemoryWrites.delete_memory, MemoryWrites.put_vector)
def test_deleted_memory_is_never_served(store: Store) -> None:
    memory_id = add(store, ALICE, "to be forgotten tea")
    with store.transaction() as tx:
        tx.memories.put_vector(ALICE, memory_id, unit(1, 0))
    assert store.memories.vector_search(ALICE, unit(1, 0), SearchFilters(), 5)
    with store.transaction() as tx:
        tx.memories.delete_memory(ALICE, memory_id, "test")
    assert store.memories.vector_search(ALICE, unit(1, 0), SearchFilters(), 5) == []
    assert store.memories.keyword_search(ALICE, ["forgotten"], SearchFilters(), 5) == []
    assert store.memories.get_memories(ALICE, [memory_id]) == []
    events = [h.event for h in store.memories.history(ALICE, memory_id)]
    assert events == [HistoryEvent.ADD, HistoryEvent.DELETE]
    with pytest.raises(NotFound), store.transaction() as tx:
        tx.memories.delete_memory(ALICE, memory_id, "test")


@covers(MemoryWrites.put_vector, MemoryReads.get_memories)
def test_put_vector_replaces_and_ignores_a_deleted_memory(store: Store) -> None:
    memory_id = add(store, ALICE, "tea")
    with store.transaction() as tx:
        tx.memories.put_vector(ALICE, memory_id, unit(1, 0))
        tx.memories.put_vector(ALICE, memory_id, unit(0, 1))
    assert store.memories.get_memories(ALICE, [memory_id])[0].embedded
    [(hit, score)] = store.memories.vector_search(ALICE, unit(0, 1), SearchFilters(), 5)
    assert hit == memory_id and score == pytest.approx(1.0, abs=1e-5)
    with store.transaction() as tx:
        tx.memories.delete_memory(ALICE, memory_id, "t")
        tx.memories.put_vector(ALICE, memory_id, unit(1, 0))  # an embedding arriving late
    assert store.memories.vector_search(ALICE, unit(1, 0), SearchFilters(), 5) == []


@covers(MemoryWrites.clear_vectors)
def test_clear_vectors_drops_every_memory_and_entity_vector(store: Store) -> None:
    ids = [add(store, scope, "tea") for scope in (ALICE, *OTHERS)]
    with store.transaction() as tx:
        for scope, memory_id in zip((ALICE, *OTHERS), ids, strict=True):
            tx.memories.put_vector(scope, memory_id, unit(1, 0))
        entity = tx.graph.upsert_entity(ALICE, "Mei", "person", 1_000)
        tx.graph.put_entity_vector(ALICE, entity.id, unit(1, 0))
    with store.transaction() as tx:
        tx.memories.clear_vectors()
    for scope, memory_id in zip((ALICE, *OTHERS), ids, strict=True):
        assert not store.memories.get_memories(scope, [memory_id])[0].embedded
        assert store.memories.vector_search(scope, unit(1, 0), SearchFilters(), 5) == []
    assert store.graph.entity_vector_search(ALICE, unit(1, 0), 5) == []
    assert len(_valid(store, ALICE)) == 1  # the memories themselves stay
