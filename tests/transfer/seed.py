"""A store holding one of every record kind, written through the public API and the ports."""

from __future__ import annotations

from omoide import Memory
from omoide.store.ports.chunks import ChunkCursor, NewChunk
from omoide.store.ports.schedules import Schedule
from omoide.store.protocol import NewMemory
from omoide.types import MemoryType, Scope

ALICE = Scope(user_id="alice", scope_id="demo")
BOB = Scope(user_id="bob", scope_id="demo")


def fill(memory: Memory) -> None:
    """Every kind for alice, a little for bob; some memories without vectors."""
    memory.create_project("garden", user_id="alice", scope_id="demo", description="plants")
    memory.create_session("chat-1", user_id="alice", scope_id="demo", project="garden")
    memory.add_messages(
        [{"role": "user", "content": "I planted tomatoes"}, {"role": "assistant", "content": "ok"}],
        user_id="alice",
        scope_id="demo",
        session_id="chat-1",
    )
    fact = memory.add(
        "Alice grows tomatoes", user_id="alice", scope_id="demo", type=MemoryType.SEMANTIC
    )[0]
    memory.update(fact.id, "Alice grows cherry tomatoes", user_id="alice", scope_id="demo")
    gone = memory.add("a passing thought", user_id="alice", scope_id="demo")[0]
    memory.delete(gone.id, user_id="alice", scope_id="demo")
    memory.add("Bob likes chess", user_id="bob", scope_id="demo", metadata={"b": 1, "a": [2]})
    memory.update_variables({"name": "Alice", "age": 41}, user_id="alice", scope_id="demo")
    _fill_ports(memory)


def _fill_ports(memory: Memory) -> None:
    """What needs an LLM through the API (graph, chunks, consolidations) or a queued job."""
    store = memory.store
    episode = store.sessions.list_episodes(ALICE, "chat-1", 10, 0)[0][0]
    with store.transaction() as tx:
        a = tx.graph.upsert_entity(ALICE, "Alice", "person", 1_700_000_000_000, episode.id)
        t = tx.graph.upsert_entity(ALICE, "tomato", "plant", 1_700_000_000_001, episode.id)
        tx.graph.put_entity_vector(ALICE, a.id, memory.embedder.embed(["Alice (person)"])[0])
        tx.graph.upsert_relationship(ALICE, a.id, t.id, "grows", "since spring", 1_700_000_000_2)
        tx.access.touch(ALICE, [], [episode.id], 1_700_000_000_500)
        tx.variables.add_usage(ALICE, 10, 5, 1, 1_700_000_000_600)
        job_id = tx.jobs.enqueue_job(BOB, "embed", {"memory_ids": ["nonexistent"]}, 3)
        tx.memories.insert_memory(ALICE, NewMemory("no vector yet", session_id="chat-1"), "test")
    last = store.chunks.session_messages(ALICE, "chat-1", None)[-1]
    cursor = ChunkCursor("h1", last.created_ms, last.seq, last.index)
    chunk = NewChunk(
        NewMemory("chunk of chat", MemoryType.CHUNK, session_id="chat-1"), cursor, 2, 9
    )
    with store.transaction() as tx:
        tx.chunks.record_chunks(ALICE, "chat-1", [chunk], "test")
    memory.create_session("chat-2", user_id="alice", scope_id="demo")
    memory.add_messages("an old chat", user_id="alice", scope_id="demo", session_id="chat-2")
    old = store.sessions.list_episodes(ALICE, "chat-2", 10, 0)[0][0]
    with store.transaction() as tx:
        plan = tx.consolidation.consolidation_plan(ALICE, [old.id])
        tx.consolidation.apply_consolidation(
            ALICE, "chat-2", "cons-1", plan, {"summary_id": None}, "t"
        )
    _fill_schedules(memory, job_id)


def _fill_schedules(memory: Memory, job_id: int) -> None:
    """JiuwenMemory's dreaming: alice's schedule has run once (a sweep, its job), bob's is
    off; alice has a scope config. Keys out of order and nested: PostgreSQL's jsonb sorts them."""
    settings = {"min_session_rounds": 4, "extra": {"z": 1, "a": [2, "x"]}}
    with memory.store.transaction() as tx:
        tx.schedules.put_schedule(
            Schedule(ALICE, True, 3_600_000, 1_700_000_001_000, settings), 1_700_000_000_700
        )
        tx.schedules.put_schedule(
            Schedule(BOB, False, 60_000, 1_700_000_009_000), 1_700_000_000_701
        )
        assert [s.scope for s in tx.schedules.claim_due(1_700_000_002_000, 10)] == [ALICE]
        tx.schedules.set_last_job(ALICE, job_id)
        tx.schedules.set_scope_config(
            ALICE, {"lang": "en", "b": {"y": None, "a": 1.5}}, 1_700_000_000_800
        )
