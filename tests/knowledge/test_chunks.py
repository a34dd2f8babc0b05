"""Chunk memories (WilmerAI trigger rules, hash ledger) and session summaries.

The rules are tested on the pure ``plan_chunks`` at their exact thresholds; the engine tests
check that the ledger never reprocesses a message, that a reset brings consolidation mode
back, and the LLM paths (chunk summaries, the rolling summary linked to its last chunk).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from omoide import Memory, MemoryType, NotFound, SearchFilters
from omoide.chunking import (
    ChunkConfig,
    ChunkMessage,
    Ledger,
    chunk_tokens,
    message_hash,
    plan_chunks,
)
from omoide.config import Settings
from omoide.embed.hashing import HashEmbedder
from omoide.errors import OmoideError
from omoide.llm.client import OpenAICompatLLM
from omoide.retrieval.context import estimate_tokens
from tests.fakes import FakeLLMServer
from tests.knowledge.conftest import api_client, open_memory, summary_reply


def msgs(*contents: str) -> list[ChunkMessage]:
    return [ChunkMessage(hash=f"h{i}", content=c, key=(i,)) for i, c in enumerate(contents)]


def text_of(tokens: int, *, highest: bool = True) -> str:
    """An ``x``-run whose estimate is exactly ``tokens`` (the longest such, or the shortest)."""
    fits = [n for n in range(1, 20 * tokens) if estimate_tokens("x" * n) == tokens]
    assert fits, tokens
    return "x" * (max(fits) if highest else min(fits))


STANDARD, FRESH = Ledger(exists=True), Ledger(exists=False)


def config(tokens: int = 10_000, messages: int = 5, lookback: int = 0) -> ChunkConfig:
    return ChunkConfig(
        chunk_estimated_token_size=tokens,
        max_messages_between_chunks=messages,
        lookback_start_turn=lookback,
    )


# the pure rules ---------------------------------------------------------------------------
def test_estimate_is_wilmers_formula_rounded_up() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("hello world") == 4  # max(2 * 1.35, 11 / 3.5) * 1.1 = 3.46
    assert estimate_tokens("a b c d e f g h i j") == 15  # words win: 10 * 1.35 * 1.1 = 14.85
    assert estimate_tokens("x" * 35) == 11  # exactly 35 / 3.5 * 1.1, no float drift


@pytest.mark.parametrize(("tokens", "chunks"), [(49, 0), (50, 1), (51, 1)])
@pytest.mark.parametrize("ledger", [STANDARD, FRESH])
def test_token_threshold_exactly_at_below_above(tokens: int, chunks: int, ledger: Ledger) -> None:
    messages = msgs(text_of(tokens))
    decision = plan_chunks(messages, ledger, config(tokens=50))
    assert len(decision.chunks) == chunks and decision.by_tokens == bool(chunks)
    assert len(decision.pending) == 1 - chunks and decision.tokens == tokens


def test_token_threshold_counts_the_messages_joined() -> None:
    two = msgs("x" * 20, "x" * 14)  # 20 + 1 newline + 14 = 35 characters: 11 tokens
    assert chunk_tokens(two) == 11
    assert len(plan_chunks(two, FRESH, config(tokens=11)).chunks) == 1
    assert plan_chunks(two, FRESH, config(tokens=12)).chunks == []


@pytest.mark.parametrize(("count", "chunks", "pending"), [(4, 0, 4), (5, 1, 0), (6, 1, 1)])
def test_message_threshold_exactly_at_below_above(count: int, chunks: int, pending: int) -> None:
    decision = plan_chunks(msgs(*["hi"] * count), STANDARD, config(messages=5))
    assert len(decision.chunks) == chunks and len(decision.pending) == pending
    assert decision.by_messages == bool(chunks) and not decision.by_tokens
    assert all(len(chunk) == 5 for chunk in decision.chunks)


def test_consolidation_mode_ignores_the_message_threshold() -> None:
    many = msgs(*["hi"] * 12)
    decision = plan_chunks(many, FRESH, config(messages=5))
    assert decision.mode == "consolidation" and decision.chunks == []
    assert len(decision.pending) == 12
    by_tokens = plan_chunks(many, FRESH, config(tokens=estimate_tokens("hi\nhi\nhi"), messages=2))
    assert [len(c) for c in by_tokens.chunks] == [3, 3, 3, 3]


def test_whichever_threshold_comes_first() -> None:
    messages = msgs("a", text_of(30), "b", "c", "d", "e", "f")
    decision = plan_chunks(messages, STANDARD, config(tokens=30, messages=5))
    assert [len(c) for c in decision.chunks] == [2, 5]
    assert decision.by_tokens and decision.by_messages


@pytest.mark.parametrize(("count", "chunks"), [(7, 0), (8, 1), (2, 0), (0, 0)])
def test_lookback_excludes_the_latest_messages(count: int, chunks: int) -> None:
    decision = plan_chunks(msgs(*["hi"] * count), STANDARD, config(messages=5, lookback=3))
    assert len(decision.chunks) == chunks
    assert decision.new == max(0, count - 3)


def test_the_ledger_hash_marks_what_was_chunked() -> None:
    messages = msgs(*["hi"] * 9)
    after = plan_chunks(messages, Ledger(True, "h3", (3,)), config(messages=5))
    assert [m.hash for m in after.chunks[0]] == ["h4", "h5", "h6", "h7", "h8"]
    gone = plan_chunks(messages[5:], Ledger(True, "h3", (3,)), config(messages=2))
    assert [m.hash for c in gone.chunks for m in c] == ["h5", "h6", "h7", "h8"]  # by key
    lost = plan_chunks(messages, Ledger(True, "nowhere", None), config(messages=1))
    assert lost.chunks == [] and lost.new == 0  # never guess: reprocess nothing
    last = plan_chunks(messages, Ledger(True, "h8", (8,)), config(messages=1))
    assert last.chunks == [] and last.reason.startswith("no new messages")


def test_identical_messages_get_distinct_hashes() -> None:
    assert message_hash("e1", 0, "user", "ok") != message_hash("e1", 1, "user", "ok")
    assert message_hash("e1", 0, "user", "ok") != message_hash("e2", 0, "user", "ok")
    assert len(message_hash("e", 0, "user", "x")) == 32


def test_wilmer_names_configure_the_rules() -> None:
    wilmer = ChunkConfig.model_validate(
        {"chunkEstimatedTokenSize": 700, "maxMessagesBetweenChunks": 8, "lookbackStartTurn": 2}
    )
    assert (wilmer.chunk_estimated_token_size, wilmer.max_messages_between_chunks) == (700, 8)
    assert ChunkConfig().chunk_estimated_token_size == 1000
    assert (ChunkConfig().max_messages_between_chunks, ChunkConfig().lookback_start_turn) == (5, 3)


# the engine ---------------------------------------------------------------------------------
SMALL = {"chunks": config(tokens=10_000, messages=4, lookback=2)}
EXPECTED = [
    f"{r}: {w} {n}" for n in range(100) for r, w in (("user", "question"), ("assistant", "answer"))
]


def exchange(memory: Memory, n: int, session: str = "s", user: str = "u") -> None:
    memory.add(
        [
            {"role": "user", "content": f"question {n}"},
            {"role": "assistant", "content": f"answer {n}"},
        ],
        user_id=user,
        session_id=session,
        infer=False,
    )


def chunks_of(memory: Memory, session: str = "s", user: str = "u") -> list[str]:
    filters = SearchFilters(session_id=session, types=[MemoryType.CHUNK])
    texts = [i.text for i in memory.get_all(user_id=user, filters=filters, limit=1000).items]
    return sorted(texts, key=lambda t: EXPECTED.index(t.splitlines()[0]))  # conversation order


def covered(texts: list[str]) -> list[str]:
    return [line for text in texts for line in text.splitlines()]


def test_no_chunk_job_until_one_is_due(tmp_path: Path) -> None:
    with open_memory(tmp_path / "m.db", **SMALL) as memory:
        for n in range(4):
            exchange(memory, n)
        assert memory.list_jobs() == []  # no chunk state yet: only the (high) token rule
        assert memory.update_chunks("s", user_id="u").mode == "consolidation"
        assert memory.job_counts()["done"] == 1 and chunks_of(memory) == []
        exchange(memory, 4)  # now standard mode: 8 new messages outside the lookback
        [job] = [j for j in memory.list_jobs() if j.state.value == "pending"]
        exchange(memory, 5)
        assert memory.job_counts()["pending"] == 1  # never two waiting for one session
        assert memory.run_jobs() == 1
        assert (
            covered(chunks_of(memory))
            == [
                f"{role}: {word} {n}"
                for n in range(5)
                for role, word in (("user", "question"), ("assistant", "answer"))
            ][:8]
        )
        assert job.payload == {"session_id": "s"}


def test_the_ledger_never_reprocesses_a_message(tmp_path: Path) -> None:
    with open_memory(tmp_path / "m.db", **SMALL) as memory:
        exchange(memory, 0)
        memory.update_chunks("s", user_id="u")
        for n in range(1, 30):
            exchange(memory, n)
            if n % 3 == 0:
                memory.run_jobs()
            if n % 7 == 0:
                memory.update_chunks("s", user_id="u")
        memory.run_jobs()
        for _ in range(3):
            assert memory.update_chunks("s", user_id="u").chunks == []
        lines = covered(chunks_of(memory))
        assert len(lines) == len(set(lines))  # no message twice
        assert lines == EXPECTED[: len(lines)] and len(lines) >= 60 - 2 - 3
        assert all(len(text.splitlines()) == 4 for text in chunks_of(memory))


def test_a_reset_brings_consolidation_mode_and_rechunks_everything(tmp_path: Path) -> None:
    with open_memory(tmp_path / "m.db", **SMALL) as memory:
        exchange(memory, 0)
        memory.update_chunks("s", user_id="u")
        for n in range(1, 12):
            exchange(memory, n)
        memory.run_jobs()
        before = chunks_of(memory)
        assert len(before) == 5 and all(len(t.splitlines()) == 4 for t in before)
        old_ids = memory.reset_chunks("s", user_id="u")
        assert len(old_ids) == 5 and chunks_of(memory) == []
        assert memory.history(old_ids[0], user_id="u")[-1].event.value == "DELETE"
        # a bigger chunk size: consolidation mode uses only the token threshold
        bigger = config(tokens=25, messages=4, lookback=2)
        memory.knowledge = memory.knowledge.model_copy(update={"chunks": bigger})
        result = memory.update_chunks("s", user_id="u")
        assert result.mode == "consolidation" and len(result.chunks) >= 2
        sizes = [len(t.splitlines()) for t in chunks_of(memory)]
        assert all(size > 4 for size in sizes)  # the message threshold did not apply
        again = covered(chunks_of(memory))
        assert again == EXPECTED[: len(again)]  # from the first message again, each once
        assert memory.update_chunks("s", user_id="u").mode == "standard"


def test_chunks_are_searchable_memories_of_their_session(tmp_path: Path) -> None:
    with open_memory(tmp_path / "m.db", **SMALL) as memory:
        exchange(memory, 0)
        memory.update_chunks("s", user_id="u")
        for n in range(1, 4):
            exchange(memory, n)
        memory.run_jobs()
        hits = memory.search(
            "question 1", user_id="u", filters=SearchFilters(types=[MemoryType.CHUNK])
        ).hits
        assert hits and hits[0].memory.type is MemoryType.CHUNK
        chunk = hits[0].memory
        assert chunk.session_id == "s" and chunk.embedded and len(chunk.source_episodes) == 2
        assert memory.search("question 1", user_id="other").hits == []


def test_a_deleted_session_finishes_its_chunk_job(tmp_path: Path) -> None:
    with open_memory(tmp_path / "m.db", **SMALL) as memory:
        exchange(memory, 0)
        memory.update_chunks("s", user_id="u")
        for n in range(1, 4):
            exchange(memory, n)
        memory.delete_session("s", user_id="u")
        assert memory.run_jobs() == 1
        assert memory.list_jobs()[0].result == {"skipped": "the session was deleted"}


def test_a_pass_whose_session_is_deleted_while_it_waits_is_not_found(tmp_path: Path) -> None:
    """The waiting caller gets the session's 404, not a 503 'chunk job N is done: not finished'
    that a client retries. A front process that runs no jobs waits; a worker process deletes
    the session, then runs the queued pass, which finds no session."""
    with open_memory(tmp_path / "m.db", **SMALL) as worker:
        exchange(worker, 0)
        front = Memory(
            tmp_path / "m.db",
            embedder=HashEmbedder(),
            settings=Settings(llm_base_url=None, run_jobs=False),
            workers=0,
        )
        outcome: list[object] = []

        def update() -> None:
            try:
                outcome.append(front.update_chunks("s", user_id="u", timeout=60))
            except OmoideError as exc:
                outcome.append(exc)

        waiting = threading.Thread(target=update)
        waiting.start()
        while not worker.job_counts()["pending"]:  # the pass is queued: the front now waits
            time.sleep(0.01)
        worker.delete_session("s", user_id="u")
        assert worker.run_jobs() == 1
        waiting.join()
        front.close()
    [error] = outcome
    assert isinstance(error, NotFound) and "'s'" in str(error), error


def test_llm_chunks_and_a_rolling_summary_linked_to_the_last_chunk(
    tmp_path: Path, llm: OpenAICompatLLM, fake_llm: FakeLLMServer
) -> None:
    rules = config(tokens=10_000, messages=4, lookback=0)
    with open_memory(tmp_path / "m.db", llm=llm, chunks=rules, summary_trigger="chunk") as memory:
        summary_reply(fake_llm, "Chunk one: questions 0 and 1.")
        summary_reply(fake_llm, "The user asked questions 0 and 1.")
        exchange(memory, 0)
        memory.update_chunks("s", user_id="u")  # creates the chunk state: no chunk yet
        exchange(memory, 1)
        assert memory.run_jobs() == 1
        [chunk] = memory.get_all(user_id="u", filters=SearchFilters(types=[MemoryType.CHUNK])).items
        assert chunk.text == "Chunk one: questions 0 and 1." and chunk.metadata["summarized"]
        [first] = memory.list_summaries("s", user_id="u").items
        assert first.text == "The user asked questions 0 and 1."
        assert first.metadata["last_chunk_id"] == chunk.id
        assert first.metadata["last_chunk_hash"] == chunk.metadata["chunk_hash"]
        prompt = fake_llm.requests[-1]["messages"][-1]["content"]
        assert "question 0" in prompt and "answer 1" in prompt

        summary_reply(fake_llm, "Chunk two.")
        summary_reply(fake_llm, "Questions 0 to 3.")
        exchange(memory, 2)
        exchange(memory, 3)
        memory.run_jobs()
        [current] = memory.list_summaries("s", user_id="u").items
        assert current.text == "Questions 0 to 3." and current.supersedes == first.id
        assert (
            "The user asked questions 0 and 1." in fake_llm.requests[-1]["messages"][-1]["content"]
        )
        everything = memory.list_summaries("s", user_id="u", include_history=True)
        assert everything.total == 2
        assert memory.token_usage().requests == 4


def test_chunk_trigger_moves_the_summary_out_of_extraction(
    tmp_path: Path, llm: OpenAICompatLLM
) -> None:
    with open_memory(tmp_path / "m.db", llm=llm, summary_trigger="chunk") as memory:
        memory.add("hello", user_id="u", session_id="s")
        [job] = memory.list_jobs()
        assert job.kind == "extract" and "summary" not in job.payload["steps"]
    with open_memory(tmp_path / "n.db", llm=llm) as memory:
        memory.add("hello", user_id="u", session_id="s")
        assert "summary" in memory.list_jobs()[0].payload["steps"]


def test_summary_crud(plain: Memory) -> None:
    made = plain.create_summary("s", "We planned a trip to Osaka.", user_id="u")
    assert made.type is MemoryType.SUMMARY and made.session_id == "s" and made.embedded
    assert plain.get_summary(made.id, user_id="u").text == "We planned a trip to Osaka."
    changed = plain.update_summary(made.id, "We planned a trip to Kyoto.", user_id="u")
    assert changed.text == "We planned a trip to Kyoto."
    assert [h.event.value for h in plain.history(made.id, user_id="u")] == ["ADD", "UPDATE"]
    page = plain.list_summaries("s", user_id="u")
    assert page.total == 1 and page.items[0].id == made.id
    hits = plain.search("Kyoto", user_id="u", filters=SearchFilters(types=[MemoryType.SUMMARY]))
    assert [h.memory.id for h in hits.hits] == [made.id]
    raw = plain.add("not a summary", user_id="u")[0]
    with pytest.raises(NotFound):
        plain.get_summary(raw.id, user_id="u")
    with pytest.raises(NotFound):
        plain.delete_summary(raw.id, user_id="u")
    with pytest.raises(NotFound):
        plain.get_summary(made.id, user_id="someone else")
    with pytest.raises(NotFound):
        plain.list_summaries("no-such-session", user_id="u")
    plain.delete_summary(made.id, user_id="u")
    assert plain.list_summaries("s", user_id="u").total == 0


def test_summary_routes(plain: Memory) -> None:
    client = api_client(plain)
    made = client.post(
        "/v1/summaries", json={"session_id": "s", "text": "Trip plans.", "user_id": "u"}
    )
    assert made.status_code == 201, made.text
    sid = made.json()["id"]
    listed = client.get("/v1/summaries", params={"session_id": "s", "user_id": "u"}).json()
    assert listed["total"] == 1 and listed["items"][0]["id"] == sid
    patched = client.patch(f"/v1/summaries/{sid}", json={"text": "Trip to Nara.", "user_id": "u"})
    assert patched.json()["text"] == "Trip to Nara."
    assert client.get(f"/v1/summaries/{sid}", params={"user_id": "x"}).status_code == 404
    assert client.delete(f"/v1/summaries/{sid}", params={"user_id": "u"}).status_code == 204
    plain.add("hi", user_id="u", session_id="s2")
    result = client.post("/v1/chunks/update", json={"session_id": "s2", "user_id": "u"})
    assert result.status_code == 200 and result.json()["mode"] == "consolidation"
    reset = client.post("/v1/chunks/reset", json={"session_id": "s2", "user_id": "u"})
    assert reset.json() == {"invalidated": []}


def test_a_backlog_is_chunked_a_pass_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from omoide.engine.chunks import service as chunks

    monkeypatch.setattr(chunks, "MAX_CHUNKS_PER_PASS", 2)
    tiny = {"chunks": config(tokens=estimate_tokens("question 0\nanswer 0"), lookback=0)}
    with open_memory(tmp_path / "m.db", **SMALL) as memory:
        for n in range(7):
            exchange(memory, n)
        memory.knowledge = memory.knowledge.model_copy(update=tiny)
        first = memory.update_chunks("s", user_id="u")
        assert len(first.chunks) == 2 and "5 more chunks queued" in first.reason
        # without worker threads the wait runs the follow-up passes too: 2 + 2 + 1 chunks
        assert memory.job_counts() == {"pending": 0, "running": 0, "done": 4, "failed": 0}
        assert covered(chunks_of(memory)) == EXPECTED[:14]
