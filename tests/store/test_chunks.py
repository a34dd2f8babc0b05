"""Contract of ``ChunkReads`` / ``ChunkWrites``: a session's messages, its chunk state and
chunk ledger."""

from __future__ import annotations

import pytest

from omoide.errors import Conflict, NotFound
from omoide.store.ports.chunks import ChunkCursor, ChunkReads, ChunkWrites, NewChunk, SessionMessage
from omoide.store.protocol import NewMemory, Store
from omoide.types import MemoryType, Message, Scope, SearchFilters
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
    return store.chunks.session_messages(scope, "s1", None)


@covers(ChunkReads.session_messages, ChunkWrites.session_messages)
def test_session_messages_in_conversation_order(store: Store) -> None:
    episodes = session_with_episodes(store, ALICE, "s1", ["m1", "m2"], ["m3"])
    messages = store.chunks.session_messages(ALICE, "s1", None)
    assert [(m.content, m.index, m.role) for m in messages] == [
        ("m1", 0, "user"),
        ("m2", 1, "user"),
        ("m3", 0, "user"),
    ]
    assert [m.episode_id for m in messages] == [episodes[0], episodes[0], episodes[1]]
    assert messages[0].seq < messages[2].seq and messages[0].created_ms <= messages[2].created_ms
    with store.transaction() as tx:
        tx.sessions.insert_episode(ALICE, "s1", [Message(role="assistant", content="m4")])
        inside = tx.chunks.session_messages(ALICE, "s1", None)
        assert inside[:3] == messages and (inside[3].content, inside[3].role) == ("m4", "assistant")
        assert store.chunks.session_messages(ALICE, "s1", None) == messages  # not committed
    with pytest.raises(NotFound):
        store.chunks.session_messages(BOB, "s1", None)


@covers(ChunkReads.session_messages, ChunkWrites.session_messages)
def test_session_messages_since_a_cursor_start_at_its_episode(store: Store) -> None:
    messages = chunked_session(store)
    at_m4 = messages[3]
    cursor = ChunkCursor("h", at_m4.created_ms, at_m4.seq, at_m4.index)
    since = store.chunks.session_messages(ALICE, "s1", cursor)
    assert [m.content for m in since] == ["m4", "m5"]  # the whole episode holding the cursor
    with store.transaction() as tx:
        assert tx.chunks.session_messages(ALICE, "s1", cursor) == since


@covers(ChunkReads.chunk_state, ChunkWrites.chunk_state, ChunkWrites.record_chunks)
def test_record_chunks_moves_the_cursor_and_marks_the_session_chunked(store: Store) -> None:
    messages = chunked_session(store)
    assert store.chunks.chunk_state(ALICE, "s1") == (False, None)
    with store.transaction() as tx:
        items = tx.chunks.record_chunks(
            ALICE, "s1", [chunk(messages, 2, "first two"), chunk(messages, 3, "third")], "t"
        )
        assert tx.chunks.chunk_state(ALICE, "s1") == (True, chunk(messages, 3, "").cursor)
        assert store.chunks.chunk_state(ALICE, "s1") == (False, None)  # not committed yet
    assert [(i.text, i.type, i.session_id) for i in items] == [
        ("first two", MemoryType.CHUNK, "s1"),
        ("third", MemoryType.CHUNK, "s1"),
    ]
    exists, cursor = store.chunks.chunk_state(ALICE, "s1")
    assert exists and cursor == ChunkCursor("hash-m3", messages[2].created_ms, messages[2].seq, 0)
    assert [m.id for m in store.memories.get_memories(ALICE, [i.id for i in items])] == [
        i.id for i in items
    ]


@covers(ChunkWrites.record_chunks, ChunkReads.chunk_state)
def test_recording_no_chunk_still_marks_the_session_chunked(store: Store) -> None:
    chunked_session(store)
    with store.transaction() as tx:
        assert tx.chunks.record_chunks(ALICE, "s1", [], "t") == []
    assert store.chunks.chunk_state(ALICE, "s1") == (True, None)


@covers(ChunkWrites.record_chunks)
def test_a_second_chunk_ending_at_the_same_message_is_a_conflict(store: Store) -> None:
    messages = chunked_session(store)
    with store.transaction() as tx:
        tx.chunks.record_chunks(ALICE, "s1", [chunk(messages, 2, "first")], "t")
    with pytest.raises(Conflict), store.transaction() as tx:
        tx.chunks.record_chunks(ALICE, "s1", [chunk(messages, 2, "duplicate")], "t")
    chunks = SearchFilters(types=[MemoryType.CHUNK])
    assert [m.text for m in store.memories.list_memories(ALICE, chunks, 10, 0)[0]] == ["first"]


@covers(ChunkWrites.record_chunks)
def test_chunks_must_end_after_the_cursor_and_after_each_other(store: Store) -> None:
    """A run that planned on an older cursor cannot record over what another run committed."""
    messages = chunked_session(store)
    with store.transaction() as tx:
        tx.chunks.record_chunks(ALICE, "s1", [chunk(messages, 3, "up to m3")], "t")
    for stale in (
        [chunk(messages, 2, "behind")],
        [chunk(messages, 5, "b"), chunk(messages, 4, "a")],
    ):
        with pytest.raises(Conflict), store.transaction() as tx:
            tx.chunks.record_chunks(ALICE, "s1", stale, "t")
    assert store.chunks.chunk_state(ALICE, "s1")[1] == chunk(messages, 3, "").cursor
    with store.transaction() as tx:
        tx.chunks.record_chunks(
            ALICE, "s1", [chunk(messages, 4, "m4"), chunk(messages, 5, "m5")], "t"
        )
    assert store.chunks.chunk_state(ALICE, "s1")[1] == chunk(messages, 5, "").cursor


@covers(ChunkReads.chunk_state, ChunkWrites.record_chunks, ChunkWrites.reset_chunks)
def test_the_ledger_is_per_tenant(store: Store) -> None:
    mine = chunked_session(store, ALICE)
    chunked_session(store, BOB)
    with store.transaction() as tx:
        tx.chunks.record_chunks(ALICE, "s1", [chunk(mine, 2, "alice's")], "t")
    assert store.chunks.chunk_state(BOB, "s1") == (False, None)
    for other in OTHERS[1:]:
        with pytest.raises(NotFound):
            store.chunks.chunk_state(other, "s1")
        with pytest.raises(NotFound), store.transaction() as tx:
            tx.chunks.record_chunks(other, "s1", [], "t")
        with pytest.raises(NotFound), store.transaction() as tx:
            tx.chunks.reset_chunks(other, "s1", "t")
    with store.transaction() as tx:
        assert tx.chunks.reset_chunks(BOB, "s1", "t") == []
    assert store.chunks.chunk_state(ALICE, "s1")[0]


@covers(ChunkWrites.reset_chunks)
def test_reset_chunks_invalidates_chunk_memories_and_forgets_the_state(store: Store) -> None:
    messages = chunked_session(store)
    keep = add(store, ALICE, "a raw memory", session_id="s1")
    with store.transaction() as tx:
        items = tx.chunks.record_chunks(
            ALICE, "s1", [chunk(messages, 2, "a"), chunk(messages, 3, "b")], "t"
        )
    with store.transaction() as tx:
        assert tx.chunks.reset_chunks(ALICE, "s1", "t") == [i.id for i in items]
    assert store.chunks.chunk_state(ALICE, "s1") == (False, None)
    valid = store.memories.list_memories(ALICE, SearchFilters(), 10, 0)[0]
    assert [m.id for m in valid] == [keep]
    every = store.memories.list_memories(ALICE, SearchFilters(include_invalid=True), 10, 0)
    assert every[1] == 3  # the chunks stay, invalid, in their history
    with store.transaction() as tx:  # and the same chunk can be recorded again
        tx.chunks.record_chunks(ALICE, "s1", [chunk(messages, 2, "a again")], "t")
