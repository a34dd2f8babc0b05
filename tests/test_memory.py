"""The library API (``omoide.Memory``) on real SQLite files with the real MiniLM model."""

from __future__ import annotations

from pathlib import Path

import pytest

from omoide import EmbedderError, InvalidInput, Memory, MemoryType, NotFound, SearchFilters
from omoide.embed import HashEmbedder
from omoide.embed.remote import OpenAICompatEmbedder
from tests import sql


def down_embedder() -> OpenAICompatEmbedder:
    """A real HTTP embedder pointed at a port nobody listens on: an outage."""
    return OpenAICompatEmbedder("http://127.0.0.1:9/v1", "any", timeout=0.5)


def test_search_finds_by_meaning_and_stays_in_tenant(memory: Memory) -> None:
    memory.add("I like jasmine tea", user_id="alice")
    memory.add("My sister lives in Osaka", user_id="alice")
    memory.add("I like jasmine tea too", user_id="bob")
    result = memory.search("What does the user drink?", user_id="alice", limit=5)
    assert result.hits[0].memory.text == "I like jasmine tea"
    assert {h.memory.user_id for h in result.hits} == {"alice"}
    assert "vector" in result.hits[0].signals and not result.degraded


def test_messages_become_memories_with_an_episode(memory: Memory) -> None:
    items = memory.add(
        [
            {"role": "user", "content": "I moved to Lisbon"},
            {"role": "assistant", "content": "Lisbon is lovely."},
        ],
        user_id="alice",
        session_id="chat-1",
    )
    assert [i.metadata["role"] for i in items] == ["user", "assistant"]
    episodes, total = memory.list_episodes("chat-1", user_id="alice")
    assert total == 1 and [m.content for m in episodes[0].messages] == [
        "I moved to Lisbon",
        "Lisbon is lovely.",
    ]
    assert items[0].source_episodes == [episodes[0].id]
    assert memory.get_session("chat-1", user_id="alice").id == "chat-1"


def test_a_turn_is_found_through_the_question_it_answers(hash_memory: Memory) -> None:
    hash_memory.add("Where did you go on holiday last summer?", user_id="u", session_id="s")
    answer = hash_memory.add("We went to Hokkaido.", user_id="u", session_id="s")[0]
    hits = hash_memory.search("holiday summer", user_id="u", recipe="keyword").hits
    assert answer.id in [h.memory.id for h in hits]


def test_embedder_outage_stores_and_queues_then_recovers(tmp_path: Path) -> None:
    with Memory(tmp_path / "m.db", embedder=down_embedder(), workers=0) as memory:
        [item] = memory.add("jasmine tea is my favourite", user_id="alice")
        assert not item.embedded
        assert memory.job_counts()["pending"] == 1
        result = memory.search("jasmine", user_id="alice")
        assert result.degraded and result.warnings
        assert [h.memory.id for h in result.hits] == [item.id]
        memory.embedder = HashEmbedder()
        assert memory.run_jobs() == 1
        assert memory.get(item.id, user_id="alice").embedded
        hits = memory.search("favourite jasmine", user_id="alice", recipe="vector").hits
        assert hits[0].memory.id == item.id


def test_failing_job_is_retried_then_failed_and_visible(tmp_path: Path) -> None:
    with Memory(tmp_path / "m.db", embedder=down_embedder(), workers=0) as memory:
        memory.add("tea", user_id="alice")
        for _ in range(5):
            sql.execute(memory.store, "UPDATE jobs SET run_after = 0")  # skip the backoff
            memory.run_jobs()
        [job] = memory.list_jobs()
        assert job.state.value == "failed" and job.attempts == 5
        assert "unreachable" in (job.last_error or "")
        assert memory.retry_job(job.id).state.value == "pending"


def test_opening_with_another_model_names_reindex(tmp_path: Path, embedder) -> None:
    path = tmp_path / "m.db"
    with Memory(path, embedder=HashEmbedder(), workers=0) as memory:
        memory.add("tea", user_id="alice")
    with Memory(path, embedder=embedder, workers=0) as memory:
        with pytest.raises(EmbedderError, match="omoide reindex"):
            memory.search("tea", user_id="alice")
        assert memory.reindex() == 1
        assert memory.search("tea", user_id="alice", recipe="vector").hits


def test_update_delete_history(memory: Memory) -> None:
    [item] = memory.add("likes green tea", user_id="alice")
    updated = memory.update(item.id, "likes jasmine tea", user_id="alice")
    assert updated.text == "likes jasmine tea" and updated.embedded
    with pytest.raises(NotFound):
        memory.update(item.id, "hijack", user_id="mallory")
    memory.delete(item.id, user_id="alice")
    with pytest.raises(NotFound):
        memory.get(item.id, user_id="alice")
    events = [h.event.value for h in memory.history(item.id, user_id="alice")]
    assert events == ["ADD", "UPDATE", "DELETE"]


def test_get_all_pages_with_the_true_total(hash_memory: Memory) -> None:
    for i in range(12):
        hash_memory.add(f"fact {i}", user_id="alice", metadata={"n": i, "even": i % 2 == 0})
    page = hash_memory.get_all(user_id="alice", limit=5, offset=10)
    assert page.total == 12 and len(page.items) == 2
    even = hash_memory.get_all(user_id="alice", filters=SearchFilters(metadata={"even": True}))
    assert even.total == 6


def test_delete_all_removes_one_tenant(hash_memory: Memory) -> None:
    hash_memory.add("a", user_id="alice")
    hash_memory.add("b", user_id="bob")
    assert hash_memory.delete_all(user_id="alice") == 1
    assert hash_memory.get_all(user_id="alice").total == 0
    assert hash_memory.get_all(user_id="bob").total == 1


def test_threshold_and_type_filters(memory: Memory) -> None:
    memory.add("I like jasmine tea", user_id="alice", type=MemoryType.SEMANTIC)
    memory.add("The weather in Oslo is cold", user_id="alice")
    result = memory.search("jasmine tea", user_id="alice", threshold=0.99)
    assert all(h.score >= 0.99 for h in result.hits)
    semantic = memory.search(
        "tea", user_id="alice", filters=SearchFilters(types=[MemoryType.SEMANTIC])
    )
    assert [h.memory.type for h in semantic.hits] == [MemoryType.SEMANTIC]


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "   ",
        "x" * 100_001,
        "bad \udcff surrogate",
        "nul \x00 char",
        b"bytes",
        [],
        [{"x": 1}],
        [{"role": "user"}],
        42,
    ],
)
def test_bad_input_is_refused_and_nothing_is_written(hash_memory: Memory, bad: object) -> None:
    before = hash_memory.store.admin.stats()
    with pytest.raises(InvalidInput):
        hash_memory.add(bad, user_id="alice")  # type: ignore[arg-type]
    assert hash_memory.store.admin.stats() == before


@pytest.mark.parametrize(
    "query", ['"', "AND OR NOT", "NEAR(a b)", "tea*", "col:tea", "(((", "the of and", "^x", "💥"]
)
def test_any_query_text_is_safe(hash_memory: Memory, query: str) -> None:
    hash_memory.add("tea AND coffee", user_id="alice")
    hash_memory.search(query, user_id="alice")


@pytest.mark.parametrize("limit", [0, -1, 10_001])
def test_bad_limits_are_refused(hash_memory: Memory, limit: int) -> None:
    with pytest.raises(InvalidInput):
        hash_memory.get_all(user_id="alice", limit=limit)


def test_unknown_ids_are_not_found(hash_memory: Memory) -> None:
    for call in (
        lambda: hash_memory.get("nope"),
        lambda: hash_memory.delete("nope"),
        lambda: hash_memory.update("nope", "x"),
        lambda: hash_memory.history("nope"),
        lambda: hash_memory.get_session("nope"),
        lambda: hash_memory.delete_session("nope"),
    ):
        with pytest.raises(NotFound):
            call()


def test_unknown_recipe_is_invalid(hash_memory: Memory) -> None:
    with pytest.raises(InvalidInput, match="hybrid"):
        hash_memory.search("tea", recipe="magic")


def test_reset_forgets_everything_including_the_model(tmp_path: Path, embedder) -> None:
    with Memory(tmp_path / "m.db", embedder=HashEmbedder(), workers=0) as memory:
        memory.add("tea", user_id="alice", session_id="s")
        memory.add("coffee", user_id="bob")
        memory.reset()
        assert memory.store.admin.stats()["memories"] == 0
        assert memory.store.admin.stats()["sessions"] == 0
        memory.embedder = embedder  # another model is fine after a reset
        memory.add("tea again", user_id="alice")
        assert memory.search("tea", user_id="alice").hits
