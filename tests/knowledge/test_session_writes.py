"""What ``Memory`` offers an interface that chunks a session itself (an emulated product's
memory nodes, an importer): the session's messages and chunk state, its memories by type, a
plain keyword search, turns stored without the engine's own chunk job, and one transaction
that writes chunks, memories, a summary, a metadata change and the LLM usage together. On real
SQLite files with the HashEmbedder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from omoide import Memory
from omoide.chunking import chunk_messages, chunk_tokens, ledger_of, new_messages
from omoide.config import ChunkConfig, KnowledgeConfig, Settings
from omoide.embed import HashEmbedder
from omoide.errors import Conflict, NotFound
from omoide.llm.protocol import Usage
from omoide.types import ChunkCursor, MemoryType, Message, NewChunk, NewMemory, Scope, SearchFilters

ALICE = {"user_id": "alice"}


def turns(*contents: str) -> list[Message]:
    roles = ("user", "assistant")
    return [Message(role=roles[i % 2], content=c) for i, c in enumerate(contents)]


def chunk_of(memory: Memory, session_id: str, count: int, text: str) -> NewChunk:
    """The next ``count`` unchunked messages of the session as one chunk, as a caller makes
    it: the rules' hashes, and the last message's position as the cursor."""
    _, cursor = memory.chunk_state(session_id, **ALICE)
    messages = memory.session_messages(session_id, since=cursor, **ALICE)
    hashed = chunk_messages(messages)
    fresh = new_messages(hashed, ledger_of(True, cursor))[:count]
    last = messages[hashed.index(fresh[-1])]
    return NewChunk(
        NewMemory(text=text, type=MemoryType.CHUNK, session_id=session_id),
        ChunkCursor(fresh[-1].hash, last.created_ms, last.seq, last.index),
        len(fresh),
        chunk_tokens(fresh),
    )


def test_record_turns_stores_each_message_once_and_queues_no_chunk_job(tmp_path: Path) -> None:
    settings = Settings(llm_base_url=None, max_messages=2)
    eager = ChunkConfig(chunk_estimated_token_size=1, lookback_start_turn=0)
    with Memory(
        tmp_path / "m.db",
        embedder=HashEmbedder(),
        settings=settings,
        workers=0,
        knowledge=KnowledgeConfig(chunks=eager),
    ) as memory:
        items = memory.record_turns(
            "d1", turns("a", "b", "c", "d", "e"), metadata={"source": "x"}, **ALICE
        )
        assert [i.text for i in items] == ["a", "b", "c", "d", "e"]
        assert items[0].metadata == {"role": "user", "source": "x"}
        assert [m.content for m in memory.session_messages("d1", **ALICE)] == list("abcde")
        _, total = memory.list_episodes("d1", **ALICE)
        assert total == 3  # at most max_messages per episode (and transaction)
        assert memory.job_counts().get("pending", 0) == 0  # no chunk job, though one is due
        assert memory.chunk_state("d1", **ALICE) == (False, None)
        memory.add([m.model_dump() for m in turns("a", "b")], session_id="d2", **ALICE)
        assert memory.job_counts()["pending"] == 1  # what an add of the same turns queues


def test_session_messages_and_chunk_state_follow_the_ledger(plain: Memory) -> None:
    with pytest.raises(NotFound):
        plain.session_messages("nobody", **ALICE)
    with pytest.raises(NotFound):
        plain.chunk_state("nobody", **ALICE)
    for text in ("one", "two", "three"):  # an episode each
        plain.record_turns("d1", turns(text), **ALICE)
    assert plain.chunk_state("d1", **ALICE) == (False, None)
    chunk = chunk_of(plain, "d1", 2, "one two")
    plain.write_session("d1", chunks=[chunk], **ALICE)
    assert plain.chunk_state("d1", **ALICE) == (True, chunk.cursor)
    since = plain.session_messages("d1", since=chunk.cursor, **ALICE)
    assert [m.content for m in since] == ["two", "three"]  # from the cursor's episode on
    later = chunk_of(plain, "d1", 5, "three")  # the rules skip what the ledger covers
    assert later.messages == 1
    plain.write_session("d1", chunks=[later], extends=chunk.cursor, **ALICE)
    assert plain.chunk_state("d1", **ALICE) == (True, later.cursor)
    with pytest.raises(NotFound):
        plain.session_messages("d1", user_id="bob")  # another tenant's session


def test_an_empty_chunk_list_marks_the_session_chunked_and_none_leaves_it(plain: Memory) -> None:
    plain.record_turns("d1", turns("one"), **ALICE)
    plain.record_turns("d2", turns("one"), **ALICE)
    plain.write_session("d1", chunks=[], **ALICE)
    plain.write_session("d2", memories=[NewMemory(text="fact", session_id="d2")], **ALICE)
    assert plain.chunk_state("d1", **ALICE) == (True, None)
    assert plain.chunk_state("d2", **ALICE) == (False, None)


def test_write_session_writes_everything_in_order_with_a_linked_summary(plain: Memory) -> None:
    plain.record_turns("d1", turns("one", "two", "three"), **ALICE)
    chunk = chunk_of(plain, "d1", 3, "the whole talk")
    extra = NewMemory(text="a fact", type=MemoryType.SEMANTIC, session_id="d1")
    summary = NewMemory(text="so far", type=MemoryType.SUMMARY, session_id="d1")
    items = plain.write_session(
        "d1",
        chunks=[chunk],
        memories=[extra],
        summary=summary,
        link_summary=True,
        extends=None,
        update_metadata=lambda metadata: {**metadata, "mark": 1},
        usage=Usage(10, 5, 1),
        **ALICE,
    )
    assert [i.type for i in items] == [MemoryType.CHUNK, MemoryType.SEMANTIC, MemoryType.SUMMARY]
    assert items[-1].metadata["last_chunk_id"] == items[0].id
    assert all(i.embedded for i in plain.session_memories("d1", **ALICE))
    assert plain.get_session("d1", **ALICE).metadata == {"mark": 1}
    assert plain.token_usage(scope=Scope(user_id="alice")).requests == 1


def test_a_summary_supersedes_the_one_it_names(plain: Memory) -> None:
    first = plain.write_session(
        "d1", summary=NewMemory(text="v1", type=MemoryType.SUMMARY, session_id="d1"), **ALICE
    )[0]
    new = NewMemory(text="v2", type=MemoryType.SUMMARY, session_id="d1", supersedes=first.id)
    plain.write_session("d1", summary=new, **ALICE)
    current = plain.session_memories("d1", types=[MemoryType.SUMMARY], **ALICE)
    assert [m.text for m in current] == ["v2"] and current[0].supersedes == first.id
    every = plain.session_memories("d1", types=[MemoryType.SUMMARY], include_invalid=True, **ALICE)
    assert [m.text for m in every] == ["v2", "v1"]


def _refuse(metadata: dict[str, Any]) -> dict[str, Any]:
    raise Conflict("moved meanwhile")


def test_write_session_is_one_transaction(plain: Memory) -> None:
    plain.record_turns("d1", turns("one", "two", "three"), **ALICE)
    chunk = chunk_of(plain, "d1", 2, "one two")
    fact = NewMemory(text="a fact", type=MemoryType.SEMANTIC, session_id="d1")
    with pytest.raises(Conflict):
        plain.write_session("d1", chunks=[chunk], memories=[fact], update_metadata=_refuse, **ALICE)
    moved = ChunkCursor("elsewhere", 0, 0, 0)
    with pytest.raises(Conflict):
        plain.write_session("d1", chunks=[chunk], memories=[fact], extends=moved, **ALICE)
    assert plain.chunk_state("d1", **ALICE) == (False, None)
    kinds = {m.type for m in plain.session_memories("d1", include_invalid=True, **ALICE)}
    assert kinds == {MemoryType.RAW}
    assert plain.get_session("d1", **ALICE).metadata == {}


def test_a_chunk_that_does_not_extend_the_ledger_is_refused(plain: Memory) -> None:
    plain.record_turns("d1", turns("one", "two", "three"), **ALICE)
    chunk = chunk_of(plain, "d1", 2, "one two")
    plain.write_session("d1", chunks=[chunk], **ALICE)
    with pytest.raises(Conflict):
        plain.write_session("d1", chunks=[chunk], **ALICE)
    chunks = plain.session_memories("d1", types=[MemoryType.CHUNK], **ALICE)
    assert [c.text for c in chunks] == ["one two"]


def test_session_memories_newest_first_limited_and_of_one_session(plain: Memory) -> None:
    plain.record_turns("d1", turns("one", "two", "three"), **ALICE)
    plain.record_turns("d2", turns("other"), **ALICE)
    assert [m.text for m in plain.session_memories("d1", **ALICE)] == ["three", "two", "one"]
    assert [m.text for m in plain.session_memories("d1", limit=2, **ALICE)] == ["three", "two"]
    assert plain.session_memories("d1", types=[MemoryType.CHUNK], **ALICE) == []
    assert plain.session_memories("nobody", **ALICE) == []
    assert plain.session_memories("d1", user_id="bob") == []


def test_keyword_search_ranks_by_words_alone_within_the_filters(plain: Memory) -> None:
    plain.add("team offsite in Lisbon in May", session_id="d1", **ALICE)
    plain.add("Lisbon", session_id="d2", **ALICE)
    plain.add("NEAR the river", session_id="d3", **ALICE)
    plain.add("team offsite in Lisbon", session_id="d1", user_id="bob")
    hits = plain.keyword_search(
        ["Lisbon", "team offsite"], filters=SearchFilters(session_id="d1"), **ALICE
    )
    assert [h.memory.text for h in hits] == ["team offsite in Lisbon in May"]
    assert hits[0].signals["keyword"].rank == 0 and hits[0].score > 0
    assert [h.memory.text for h in plain.keyword_search(["NEAR"], **ALICE)] == ["NEAR the river"]
    assert plain.keyword_search([], **ALICE) == []


def test_max_text_chars_is_the_setting(tmp_path: Path) -> None:
    settings = Settings(llm_base_url=None, max_text_chars=1234)
    with Memory(tmp_path / "m.db", embedder=HashEmbedder(), settings=settings, workers=0) as m:
        assert m.max_text_chars == 1234
