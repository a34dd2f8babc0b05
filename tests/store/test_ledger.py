"""Contract of ``LedgerReads`` / ``LedgerWrites``: the chunk ledger, session messages and
access tracking. Consolidation is in ``test_consolidation.py``."""

from __future__ import annotations

import pytest

from omoide.errors import Conflict, NotFound
from omoide.store.ports.ledger import (
    ChunkCursor,
    LedgerReads,
    LedgerWrites,
    NewChunk,
    SessionMessage,
)
from omoide.store.protocol import NewMemory, Store
from omoide.types import MemoryType, Message, Scope, SearchFilters, dt_to_ms
from tests.store.contract import ALICE, BOB, OTHERS, add, covers, session_with_episodes


def chunk(messages: list[SessionMessage], upto: int, text: str) -> NewChunk:
    """A chunk memory covering ``messages[:upto]``, its cursor at the last of them."""
    last = messages[upto - 1]
    return NewChunk(
        memory=NewMemory(text=text, type=MemoryType.CHUNK, session_id="s1"),
        cursor=ChunkCursor(f"hash-{last.content}", last.created_ms, last.seq, last.index),
        messages=upto,
        tokens=10 * upto,
    )


def chunked_session(store: Store, scope: Scope = ALICE) -> list[SessionMessage]:
    session_with_episodes(store, scope, "s1", ["m1", "m2"], ["m3"], ["m4", "m5"])
    return store.ledger.session_messages(scope, "s1", None)


@covers(LedgerReads.session_messages, LedgerWrites.session_messages)
def test_session_messages_in_conversation_order(store: Store) -> None:
    episodes = session_with_episodes(store, ALICE, "s1", ["m1", "m2"], ["m3"])
    messages = store.ledger.session_messages(ALICE, "s1", None)
    assert [(m.content, m.index, m.role) for m in messages] == [
        ("m1", 0, "user"),
        ("m2", 1, "user"),
        ("m3", 0, "user"),
    ]
    assert [m.episode_id for m in messages] == [episodes[0], episodes[0], episodes[1]]
    assert messages[0].seq < messages[2].seq and messages[0].created_ms <= messages[2].created_ms
    with store.transaction() as tx:
        tx.sessions.insert_episode(ALICE, "s1", [Message(role="assistant", content="m4")])
        inside = tx.ledger.session_messages(ALICE, "s1", None)
        assert inside[:3] == messages and (inside[3].content, inside[3].role) == ("m4", "assistant")
        assert store.ledger.session_messages(ALICE, "s1", None) == messages  # not committed
    with pytest.raises(NotFound):
        store.ledger.session_messages(BOB, "s1", None)


@covers(LedgerReads.session_messages, LedgerWrites.session_messages)
def test_session_messages_since_a_cursor_start_at_its_episode(store: Store) -> None:
    messages = chunked_session(store)
    at_m4 = messages[3]
    cursor = ChunkCursor("h", at_m4.created_ms, at_m4.seq, at_m4.index)
    since = store.ledger.session_messages(ALICE, "s1", cursor)
    assert [m.content for m in since] == ["m4", "m5"]  # the whole episode holding the cursor
    with store.transaction() as tx:
        assert tx.ledger.session_messages(ALICE, "s1", cursor) == since


@covers(LedgerReads.chunk_state, LedgerWrites.chunk_state, LedgerWrites.record_chunks)
def test_record_chunks_moves_the_cursor_and_marks_the_session_chunked(store: Store) -> None:
    messages = chunked_session(store)
    assert store.ledger.chunk_state(ALICE, "s1") == (False, None)
    with store.transaction() as tx:
        items = tx.ledger.record_chunks(
            ALICE, "s1", [chunk(messages, 2, "first two"), chunk(messages, 3, "third")], "t"
        )
        assert tx.ledger.chunk_state(ALICE, "s1") == (True, chunk(messages, 3, "").cursor)
        assert store.ledger.chunk_state(ALICE, "s1") == (False, None)  # not committed yet
    assert [(i.text, i.type, i.session_id) for i in items] == [
        ("first two", MemoryType.CHUNK, "s1"),
        ("third", MemoryType.CHUNK, "s1"),
    ]
    exists, cursor = store.ledger.chunk_state(ALICE, "s1")
    assert exists and cursor == ChunkCursor("hash-m3", messages[2].created_ms, messages[2].seq, 0)
    assert [m.id for m in store.memories.get_memories(ALICE, [i.id for i in items])] == [
        i.id for i in items
    ]


@covers(LedgerWrites.record_chunks, LedgerReads.chunk_state)
def test_recording_no_chunk_still_marks_the_session_chunked(store: Store) -> None:
    chunked_session(store)
    with store.transaction() as tx:
        assert tx.ledger.record_chunks(ALICE, "s1", [], "t") == []
    assert store.ledger.chunk_state(ALICE, "s1") == (True, None)


@covers(LedgerWrites.record_chunks)
def test_a_second_chunk_ending_at_the_same_message_is_a_conflict(store: Store) -> None:
    messages = chunked_session(store)
    with store.transaction() as tx:
        tx.ledger.record_chunks(ALICE, "s1", [chunk(messages, 2, "first")], "t")
    with pytest.raises(Conflict), store.transaction() as tx:
        tx.ledger.record_chunks(ALICE, "s1", [chunk(messages, 2, "duplicate")], "t")
    chunks = SearchFilters(types=[MemoryType.CHUNK])
    assert [m.text for m in store.memories.list_memories(ALICE, chunks, 10, 0)[0]] == ["first"]


@covers(LedgerWrites.record_chunks)
def test_chunks_must_end_after_the_cursor_and_after_each_other(store: Store) -> None:
    """A run that planned on an older cursor cannot record over what another run committed."""
    messages = chunked_session(store)
    with store.transaction() as tx:
        tx.ledger.record_chunks(ALICE, "s1", [chunk(messages, 3, "up to m3")], "t")
    for stale in (
        [chunk(messages, 2, "behind")],
        [chunk(messages, 5, "b"), chunk(messages, 4, "a")],
    ):
        with pytest.raises(Conflict), store.transaction() as tx:
            tx.ledger.record_chunks(ALICE, "s1", stale, "t")
    assert store.ledger.chunk_state(ALICE, "s1")[1] == chunk(messages, 3, "").cursor
    with store.transaction() as tx:
        tx.ledger.record_chunks(
            ALICE, "s1", [chunk(messages, 4, "m4"), chunk(messages, 5, "m5")], "t"
        )
    assert store.ledger.chunk_state(ALICE, "s1")[1] == chunk(messages, 5, "").cursor


@covers(LedgerReads.chunk_state, LedgerWrites.record_chunks, LedgerWrites.reset_chunks)
def test_the_ledger_is_per_tenant(store: Store) -> None:
    mine = chunked_session(store, ALICE)
    chunked_session(store, BOB)
    with store.transaction() as tx:
        tx.ledger.record_chunks(ALICE, "s1", [chunk(mine, 2, "alice's")], "t")
    assert store.ledger.chunk_state(BOB, "s1") == (False, None)
    for other in OTHERS[1:]:
        with pytest.raises(NotFound):
            store.ledger.chunk_state(other, "s1")
        with pytest.raises(NotFound), store.transaction() as tx:
            tx.ledger.record_chunks(other, "s1", [], "t")
        with pytest.raises(NotFound), store.transaction() as tx:
            tx.ledger.reset_chunks(other, "s1", "t")
    with store.transaction() as tx:
        assert tx.ledger.reset_chunks(BOB, "s1", "t") == []
    assert store.ledger.chunk_state(ALICE, "s1")[0]


@covers(LedgerWrites.reset_chunks)
def test_reset_chunks_invalidates_chunk_memories_and_forgets_the_state(store: Store) -> None:
    messages = chunked_session(store)
    keep = add(store, ALICE, "a raw memory", session_id="s1")
    with store.transaction() as tx:
        items = tx.ledger.record_chunks(
            ALICE, "s1", [chunk(messages, 2, "a"), chunk(messages, 3, "b")], "t"
        )
    with store.transaction() as tx:
        assert tx.ledger.reset_chunks(ALICE, "s1", "t") == [i.id for i in items]
    assert store.ledger.chunk_state(ALICE, "s1") == (False, None)
    valid = store.memories.list_memories(ALICE, SearchFilters(), 10, 0)[0]
    assert [m.id for m in valid] == [keep]
    every = store.memories.list_memories(ALICE, SearchFilters(include_invalid=True), 10, 0)
    assert every[1] == 3  # the chunks stay, invalid, in their history
    with store.transaction() as tx:  # and the same chunk can be recorded again
        tx.ledger.record_chunks(ALICE, "s1", [chunk(messages, 2, "a again")], "t")


@covers(LedgerWrites.touch, LedgerReads.episode_stats)
def test_touch_counts_an_access_of_memories_and_their_episodes(store: Store) -> None:
    first, second = session_with_episodes(store, ALICE, "s1", ["a"], ["b"])
    memory_id = add(store, ALICE, "from the first", session_id="s1", source_episodes=[first])
    with store.transaction() as tx:
        assert tx.ledger.touch(ALICE, [memory_id], [], 7_000) == 2  # the memory and its source
        assert tx.ledger.touch(ALICE, [], [second], 8_000) == 1
        assert tx.ledger.touch(ALICE, [memory_id, "no-such-id"], [first], 9_000) == 2
    [item] = store.memories.get_memories(ALICE, [memory_id])
    assert item.access_count == 2 and item.last_accessed_at is not None
    stats = {s.episode_id: s for s in store.ledger.episode_stats(ALICE, "s1")}
    assert (stats[first].access_count, stats[first].last_accessed_ms) == (2, 9_000)
    assert (stats[second].access_count, stats[second].last_accessed_ms) == (1, 8_000)


@pytest.mark.parametrize("other", OTHERS)
@covers(LedgerWrites.touch)
def test_touch_never_counts_another_tenants_rows(store: Store, other: Scope) -> None:
    [episode] = session_with_episodes(store, ALICE, "s1", ["a"])
    memory_id = add(store, ALICE, "alice's", session_id="s1", source_episodes=[episode])
    with store.transaction() as tx:
        assert tx.ledger.touch(other, [memory_id], [episode], 5_000) == 0
    assert store.memories.get_memories(ALICE, [memory_id])[0].access_count == 0
    assert store.ledger.episode_stats(ALICE, "s1")[0].access_count == 0


@covers(LedgerReads.episode_stats)
def test_episode_stats_per_episode_in_order(store: Store) -> None:
    ids = session_with_episodes(store, ALICE, "s1", ["a"], ["b"], ["c"])
    stats = store.ledger.episode_stats(ALICE, "s1")
    assert [s.episode_id for s in stats] == ids
    assert all(s.access_count == 0 and s.last_accessed_ms is None for s in stats)
    assert not any(s.consolidated for s in stats)
    episode = store.sessions.get_episode(ALICE, ids[0])
    assert stats[0].created_ms == dt_to_ms(episode.created_at)
    with pytest.raises(NotFound):
        store.ledger.episode_stats(BOB, "s1")
