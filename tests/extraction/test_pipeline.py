"""Well-formed replies end to end: one add becomes every kind of memory the seeds describe."""

from __future__ import annotations

from pathlib import Path

from omoide import Memory, MemoryType, SearchFilters
from omoide.config import Settings
from omoide.embed import HashEmbedder
from omoide.llm.client import OpenAICompatLLM
from omoide.types import JobState, Scope
from tests.extraction.conftest import CHAT, GRAPH, script
from tests.fakes import FakeLLMServer

VARIABLES = [
    {"name": "city", "description": "Where the user lives"},
    {"name": "age", "description": "The user's age", "type": "integer", "required": False},
]


def full_script(fake: FakeLLMServer) -> None:
    script(
        fake,
        variables={"city": "Shenzhen", "age": None},
        facts=["The user's name is Mei", "The user lives in Shenzhen"],
        profile={"name": "Mei", "home city": "Shenzhen"},
        summary="Mei introduced herself; she lives in Shenzhen.",
        graph=GRAPH,
    )


def test_one_add_extracts_every_kind_of_memory(mem: Memory, fake_llm: FakeLLMServer) -> None:
    full_script(fake_llm)
    result = mem.add_messages(
        CHAT, user_id="mei", session_id="chat-1", mem_variables=VARIABLES, wait=True
    )
    assert result.extraction.state == "done", result.extraction
    assert len(fake_llm.requests) == 5  # no reconcile call: nothing was stored yet
    by_type: dict[MemoryType, list[str]] = {}
    for item in result.extracted:
        by_type.setdefault(item.type, []).append(item.text)
        assert item.source_episodes == result.items[0].source_episodes
        assert item.session_id == "chat-1" and item.embedded
    assert by_type[MemoryType.SEMANTIC] == ["The user lives in Shenzhen", "The user's name is Mei"]
    assert sorted(by_type[MemoryType.USER_PROFILE]) == ["home city: Shenzhen", "name: Mei"]
    assert by_type[MemoryType.SUMMARY] == ["Mei introduced herself; she lives in Shenzhen."]
    assert by_type[MemoryType.EPISODIC][0].startswith("user: I'm Mei.")
    assert mem.get_variables(user_id="mei") == {"city": "Shenzhen"}

    entities, total = mem.list_entities(user_id="mei")
    assert total == 4 and {e.name for e in entities} == {"Mei", "Lin", "Acme", "Shenzhen"}
    assert all(e.episodes == result.items[0].source_episodes for e in entities)
    relationships, count = mem.list_relationships(user_id="mei")
    assert count == 3
    sister = next(r for r in relationships if r.label == "sister of")
    assert (sister.from_name, sister.to_name, sister.notes) == ("Lin", "Mei", "older sister")

    job = mem.list_jobs()[0]
    assert job.kind == "extract" and job.state is JobState.DONE and job.result is not None
    assert {s["status"] for s in job.result["steps"].values()} == {"done"}
    assert job.result["llm_calls"] == 5
    usage = mem.token_usage()
    assert usage.requests == 5 and usage.prompt_tokens > 0 and usage.completion_tokens > 0
    assert mem.token_usage(scope=Scope(user_id="mei")) == usage
    assert mem.token_usage(scope=Scope(user_id="someone else")).requests == 0

    hits = mem.search(
        "where does she live", user_id="mei", filters=SearchFilters(types=[MemoryType.SEMANTIC])
    ).hits
    assert hits and {h.memory.type for h in hits} == {MemoryType.SEMANTIC}


def test_add_keeps_returning_the_stored_messages(mem: Memory, fake_llm: FakeLLMServer) -> None:
    full_script(fake_llm)
    items = mem.add(CHAT, user_id="mei", session_id="s", mem_variables=VARIABLES, wait=True)
    assert [i.type for i in items] == [MemoryType.RAW, MemoryType.RAW]
    assert mem.get_all(user_id="mei").total == 2 + 1 + 2 + 2 + 1
    assert mem.job_counts()["done"] == 1


def test_one_job_per_add_not_per_message(mem: Memory, fake_llm: FakeLLMServer) -> None:
    messages = [{"role": "user", "content": f"message {i}"} for i in range(5)]
    mem.add(messages, user_id="u", session_id="s", enable_long_term_mem=False)
    assert mem.job_counts()["pending"] == 0  # nothing switched on: no job at all
    mem.add(messages, user_id="u", session_id="s")
    [job] = mem.list_jobs()
    assert job.kind == "extract" and len(job.payload["memory_ids"]) == 5
    assert job.payload["steps"] == ["episodic", "semantic", "profile", "summary", "graph"]


def test_switches_choose_the_steps(mem: Memory, fake_llm: FakeLLMServer) -> None:
    script(fake_llm, summary="A greeting.")
    result = mem.add_messages(
        CHAT,
        user_id="u",
        session_id="s",
        enable_semantic_memory=False,
        enable_user_profile=False,
        enable_episodic_memory=False,
        enable_graph=False,
        wait=True,
    )
    assert result.extraction.state == "done"
    assert [i.type for i in result.extracted] == [MemoryType.SUMMARY]
    assert len(fake_llm.requests) == 1 and "running summary" in str(fake_llm.requests[0])
    off = mem.add_messages(CHAT, user_id="u", enable_long_term_mem=False)
    assert off.extraction.state == "off" and off.extraction.job_id is None


def test_summary_is_cumulative_and_supersedes(mem: Memory, fake_llm: FakeLLMServer) -> None:
    only_summary = {
        "enable_semantic_memory": False,
        "enable_user_profile": False,
        "enable_episodic_memory": False,
        "enable_graph": False,
    }
    script(fake_llm, summary="Mei lives in Shenzhen.")
    first = mem.add_messages(CHAT, user_id="u", session_id="s", wait=True, **only_summary)
    script(fake_llm, summary="Mei lives in Shenzhen and is planning a trip to Kyoto.")
    second = mem.add_messages(
        "I'm planning a trip to Kyoto", user_id="u", session_id="s", wait=True, **only_summary
    )
    assert "Mei lives in Shenzhen." in fake_llm.requests[1]["messages"][1]["content"]
    [old], [new] = first.extracted, second.extracted
    assert new.supersedes == old.id
    summaries = mem.get_all(user_id="u", filters=SearchFilters(types=[MemoryType.SUMMARY]))
    assert [i.text for i in summaries.items] == [new.text]
    assert mem.get(old.id, user_id="u").invalid_at is not None
    assert [h.event.value for h in mem.history(new.id, user_id="u")] == ["ADD", "UPDATE"]


def test_call_budget_skips_the_remaining_steps(
    tmp_path: Path, llm: OpenAICompatLLM, fake_llm: FakeLLMServer
) -> None:
    settings = Settings(llm_max_calls_per_episode=2)
    with Memory(
        tmp_path / "b.db", embedder=HashEmbedder(), llm=llm, settings=settings, workers=0
    ) as memory:
        script(fake_llm, facts=["The user is Mei"], profile={"name": "Mei"})
        result = memory.add_messages(CHAT, user_id="u", session_id="s", wait=True)
    steps = result.extraction.steps
    assert result.extraction.state == "done" and len(fake_llm.requests) == 2
    assert [steps[s]["status"] for s in ("episodic", "semantic", "profile")] == ["done"] * 3
    for skipped in ("summary", "graph"):
        assert steps[skipped]["status"] == "skipped"
        assert "budget (2 per episode)" in steps[skipped]["detail"]


def test_without_a_session_the_messages_are_read_from_their_memories(
    mem: Memory, fake_llm: FakeLLMServer
) -> None:
    script(fake_llm, facts=["The user likes jasmine tea"], profile={}, graph={"entities": []})
    result = mem.add_messages("I like jasmine tea", user_id="u", wait=True)
    assert result.extraction.state == "done"
    assert "I like jasmine tea" in fake_llm.requests[0]["messages"][1]["content"]
    assert result.extraction.steps["summary"] == {
        "status": "skipped",
        "detail": "no session to summarise",
        "calls": 0,
    }
    assert {i.type for i in result.extracted} == {MemoryType.EPISODIC, MemoryType.SEMANTIC}


def test_messages_deleted_before_extraction_are_not_extracted(
    mem: Memory, fake_llm: FakeLLMServer
) -> None:
    mem.add(CHAT, user_id="u", session_id="s")
    mem.delete_session("s", user_id="u")
    assert mem.run_jobs() == 1
    [job] = mem.list_jobs()
    assert job.state is JobState.DONE and job.result == {
        "skipped": "the messages were deleted before extraction"
    }
    assert fake_llm.requests == []
