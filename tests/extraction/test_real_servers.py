"""What real servers and small models do, end to end through an add (issue 16): raw newlines in
strings, placeholders and prompt examples, an over-long fact, invented entity types, runaway
generation and a cold client negotiating its format. Runs once per server profile."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from omoide import Memory, MemoryType, SearchFilters
from omoide.embed import HashEmbedder
from omoide.llm.client import OpenAICompatLLM
from omoide.types import JobState
from tests.extraction.conftest import CHAT, script
from tests.fakes import FakeLLMServer
from tests.fakes.profiles import Profile

FACTS_ONLY: dict[str, Any] = {
    "enable_user_profile": False,
    "enable_episodic_memory": False,
    "enable_summary_memory": False,
    "enable_graph": False,
}
GRAPH_ONLY: dict[str, Any] = {
    "enable_semantic_memory": False,
    "enable_user_profile": False,
    "enable_episodic_memory": False,
    "enable_summary_memory": False,
}


def semantic(memory: Memory) -> list[str]:
    page = memory.get_all(user_id="u", filters=SearchFilters(types=[MemoryType.SEMANTIC]))
    return sorted(i.text for i in page.items)


def test_junk_facts_are_dropped_one_by_one_and_the_step_is_done(
    mem: Memory, fake_llm: FakeLLMServer
) -> None:
    said = [
        "The user is Mei",
        "...",
        "<fact>",
        "The user restores antique typewriters",  # the facts prompt's own example
        "The user " + "keeps talking " * 100,  # over-long: failed the whole step before
        "The user lives in Shenzhen",
    ]
    script(fake_llm, facts=said)
    result = mem.add_messages(CHAT, user_id="u", wait=True, **FACTS_ONLY)
    assert result.extraction.state == "done", result.extraction
    assert semantic(mem) == ["The user is Mei", "The user lives in Shenzhen"]


def test_a_raw_newline_inside_a_string_is_stored_not_a_failure(
    mem: Memory, fake_llm: FakeLLMServer
) -> None:
    fake_llm.enqueue('{"facts": ["The user is Mei,\nwho lives in Shenzhen",]}')
    result = mem.add_messages(CHAT, user_id="u", wait=True, **FACTS_ONLY)
    assert result.extraction.state == "done", result.extraction
    assert semantic(mem) == ["The user is Mei, who lives in Shenzhen"]
    assert mem.token_usage().requests == 1, "parsed as it came, no repair request"


def test_entity_types_are_stored_from_the_vocabulary(mem: Memory, fake_llm: FakeLLMServer) -> None:
    graph = {
        "entities": [
            {"name": "Mei", "type": "Person"},
            {"name": "Lin", "type": "older sister of the user"},
            {"name": "Acme", "type": "company"},
            {"name": "Shenzhen", "type": "City"},
        ],
        "relationships": [{"from": "Lin", "to": "Acme", "label": "works at", "notes": None}],
    }
    script(fake_llm, graph=graph)
    result = mem.add_messages(CHAT, user_id="u", wait=True, **GRAPH_ONLY)
    assert result.extraction.state == "done", result.extraction
    entities = {e.name: e.type for e in mem.list_entities(user_id="u")[0]}
    assert entities == {
        "Mei": "person",
        "Lin": "other",
        "Acme": "organization",
        "Shenzhen": "location",
    }


def test_runaway_generation_fails_as_truncated_and_spends_one_budget(
    mem: Memory, fake_llm: FakeLLMServer
) -> None:
    fake_llm.enqueue_runaway('{"facts": ["The user', " said that the user said")
    result = mem.add_messages(CHAT, user_id="u", wait=True, **FACTS_ONLY)
    job = next(j for j in mem.list_jobs() if j.kind == "extract")
    assert result.extraction.state == "failed" and job.state is JobState.FAILED
    assert job.last_error is not None and "finish_reason=length" in job.last_error
    assert "no JSON" not in job.last_error
    assert job.attempts == 1, "the same prompt would run into the same budget"
    assert [r["max_tokens"] for r in fake_llm.requests] == [512]


def test_a_cold_client_negotiates_inside_the_first_job(
    tmp_path: Path, fake_llm: FakeLLMServer, llm_profile: Profile
) -> None:
    cold = OpenAICompatLLM(fake_llm.url, "fake-model", timeout=2)
    with Memory(tmp_path / "cold.db", embedder=HashEmbedder(), llm=cold, workers=0) as memory:
        fake_llm.enqueue(json.dumps({"facts": ["The user is Mei"]}))
        result = memory.add_messages(CHAT, user_id="u", wait=True, **FACTS_ONLY)
        assert result.extraction.state == "done", result.extraction
        assert memory.token_usage().requests == 1, "a refused format is not a request spent"
    refused = len(fake_llm.requests) - 1
    assert refused == (1 if llm_profile.name == "llama_cpp_python" else 0)
    cold.close()
