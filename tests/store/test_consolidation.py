"""Contract of ``ConsolidationReads`` / ``ConsolidationWrites``: ranking episodes, planning
what merging them changes, doing it, and undoing it. Nothing is erased."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from omoide.errors import Conflict, NotFound
from omoide.store.ports.consolidation import (
    ConsolidationPlan,
    ConsolidationReads,
    ConsolidationWrites,
)
from omoide.store.protocol import NewMemory, Store
from omoide.types import MemoryType, SearchFilters, dt_to_ms
from tests.store.contract import ALICE, BOB, add, covers, session_with_episodes, unit


@dataclass
class World:
    episodes: list[str]
    memories: dict[str, str]
    entities: dict[str, str]
    relationship: str


def world(store: Store) -> World:
    """Three episodes; memories and entities that a consolidation of the first two takes
    (``only_first``, ``both``, ``person``) and ones it must leave (the rest)."""
    e1, e2, e3 = session_with_episodes(store, ALICE, "s1", ["a"], ["b"], ["c"])
    session_with_episodes(store, BOB, "s1", ["bob"])

    def mem(text: str, sources: list[str], type_: MemoryType = MemoryType.RAW) -> str:
        return add(store, ALICE, text, session_id="s1", source_episodes=sources, type=type_)

    memories = {
        "only_first": mem("only first", [e1]),
        "both": mem("both", [e1, e2], MemoryType.EPISODIC),
        "also_third": mem("also third", [e1, e3]),
        "fact": mem("a fact", [e1], MemoryType.SEMANTIC),
    }
    with store.transaction() as tx:
        tx.memories.put_vector(ALICE, memories["only_first"], unit(1, 0))
        person = tx.graph.upsert_entity(ALICE, "Mei", "person", 1, episode_id=e1)
        shared = tx.graph.upsert_entity(ALICE, "Kyoto", "place", 1, episode_id=e1)
        tx.graph.upsert_entity(ALICE, "Kyoto", "place", 2, episode_id=e3)
        manual = tx.graph.upsert_entity(ALICE, "Ann", "person", 1, episode_id=e1, source="user")
        edge = tx.graph.upsert_relationship(ALICE, person.id, shared.id, "visits", None, 1)
    entities = {"person": person.id, "shared": shared.id, "manual": manual.id}
    return World([e1, e2, e3], memories, entities, edge.id)


@covers(ConsolidationReads.consolidation_plan, ConsolidationWrites.consolidation_plan)
def test_plan_takes_only_what_the_episodes_alone_support(store: Store) -> None:
    w = world(store)
    plan = store.consolidation.consolidation_plan(ALICE, w.episodes[:2])
    assert plan == ConsolidationPlan(
        episodes=w.episodes[:2],
        memories=[w.memories["only_first"], w.memories["both"]],
        vectors=[w.memories["only_first"]],
        entities=[w.entities["person"]],
        relationships=[w.relationship],
    )
    with store.transaction() as tx:
        assert tx.consolidation.consolidation_plan(ALICE, w.episodes[:2]) == plan
    assert store.consolidation.consolidation_plan(ALICE, []) == ConsolidationPlan(episodes=[])
    other = store.consolidation.consolidation_plan(BOB, w.episodes[:2])
    assert (other.memories, other.entities, other.relationships) == ([], [], [])


@covers(ConsolidationWrites.consolidation_plan)
def test_plan_in_a_transaction_sees_its_own_writes(store: Store) -> None:
    w = world(store)
    with store.transaction() as tx:
        before = tx.consolidation.consolidation_plan(ALICE, w.episodes[:2])
        tx.memories.delete_memory(ALICE, w.memories["both"], "t")
        after = tx.consolidation.consolidation_plan(ALICE, w.episodes[:2])
        assert store.consolidation.consolidation_plan(ALICE, w.episodes[:2]) == before
    assert after.memories == [w.memories["only_first"]] != before.memories


@covers(ConsolidationWrites.apply_consolidation, ConsolidationReads.episode_stats)
def test_apply_invalidates_sweeps_and_marks_the_episodes(store: Store) -> None:
    w = world(store)
    plan = store.consolidation.consolidation_plan(ALICE, w.episodes[:2])
    with store.transaction() as tx:
        tx.consolidation.apply_consolidation(
            ALICE, "s1", "c1", plan, {"memories": plan.memories}, "t"
        )
    valid = {m.id for m in store.memories.list_memories(ALICE, SearchFilters(), 10, 0)[0]}
    assert valid == {w.memories["also_third"], w.memories["fact"]}
    kept = store.memories.get_memories(ALICE, plan.memories)  # invalid, not erased
    assert len(kept) == 2 and all(m.invalid_at is not None and not m.embedded for m in kept)
    stats = store.consolidation.episode_stats(ALICE, "s1")
    assert [s.consolidated for s in stats] == [True, True, False]
    assert store.sessions.get_episode(ALICE, w.episodes[0]).consolidated_at is not None
    with pytest.raises(NotFound):
        store.graph.get_entity(ALICE, w.entities["person"])
    assert store.graph.get_entity(ALICE, w.entities["manual"]).name == "Ann"
    assert store.graph.list_relationships(ALICE, None, 10, 0)[1] == 0
    with pytest.raises(Conflict), store.transaction() as tx:  # already consolidated
        tx.consolidation.apply_consolidation(ALICE, "s1", "c2", plan, {"memories": []}, "t")


@covers(ConsolidationWrites.apply_consolidation)
def test_apply_refuses_episodes_of_another_tenant(store: Store) -> None:
    w = world(store)
    plan = ConsolidationPlan(episodes=w.episodes[:1])
    with pytest.raises(Conflict), store.transaction() as tx:
        tx.consolidation.apply_consolidation(BOB, "s1", "c1", plan, {"memories": []}, "t")
    assert not any(s.consolidated for s in store.consolidation.episode_stats(ALICE, "s1"))


@covers(ConsolidationWrites.revert_consolidation)
def test_revert_restores_memories_episodes_and_graph_and_drops_the_summary(
    store: Store,
) -> None:
    w = world(store)
    plan = store.consolidation.consolidation_plan(ALICE, w.episodes[:2])
    with store.transaction() as tx:
        summary = tx.memories.insert_memory(ALICE, _summary(w), "t")
        report = {"memories": plan.memories, "summary_id": summary.id}
        tx.consolidation.apply_consolidation(ALICE, "s1", "c1", plan, report, "t")
    with pytest.raises(NotFound), store.transaction() as tx:
        tx.consolidation.revert_consolidation(BOB, "c1", "t")
    with store.transaction() as tx:
        undone = tx.consolidation.revert_consolidation(ALICE, "c1", "t")
    assert sorted(undone["memories"]) == sorted(plan.memories)
    assert undone["summary_id"] == summary.id and w.entities["person"] in undone["entities"]
    valid = {m.id for m in store.memories.list_memories(ALICE, SearchFilters(), 10, 0)[0]}
    assert valid == set(w.memories.values())  # the summary is no longer valid
    assert not any(s.consolidated for s in store.consolidation.episode_stats(ALICE, "s1"))
    assert store.graph.get_entity(ALICE, w.entities["person"]).name == "Mei"
    assert [r.id for r in store.graph.list_relationships(ALICE, None, 10, 0)[0]] == [w.relationship]
    with pytest.raises(Conflict), store.transaction() as tx:
        tx.consolidation.revert_consolidation(ALICE, "c1", "t")
    with pytest.raises(NotFound), store.transaction() as tx:
        tx.consolidation.revert_consolidation(ALICE, "never-ran", "t")


def _summary(w: World) -> NewMemory:
    return NewMemory(
        text="summary of a and b",
        type=MemoryType.SUMMARY,
        session_id="s1",
        source_episodes=w.episodes[:2],
    )


@covers(ConsolidationReads.episode_stats)
def test_episode_stats_per_episode_in_order(store: Store) -> None:
    ids = session_with_episodes(store, ALICE, "s1", ["a"], ["b"], ["c"])
    stats = store.consolidation.episode_stats(ALICE, "s1")
    assert [s.episode_id for s in stats] == ids
    assert all(s.access_count == 0 and s.last_accessed_ms is None for s in stats)
    assert not any(s.consolidated for s in stats)
    episode = store.sessions.get_episode(ALICE, ids[0])
    assert stats[0].created_ms == dt_to_ms(episode.created_at)
    with pytest.raises(NotFound):
        store.consolidation.episode_stats(BOB, "s1")
