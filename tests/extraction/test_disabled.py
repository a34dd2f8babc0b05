"""Without an LLM everything but extraction works, and extraction says it is disabled."""

from __future__ import annotations

from pathlib import Path

import pytest

from omoide import FeatureDisabled, Memory, MemoryType
from omoide.config import Settings
from omoide.embed import HashEmbedder
from tests.extraction.conftest import CHAT
from tests.fakes import FakeLLMServer


def test_add_works_and_extraction_reports_disabled(plain: Memory) -> None:
    items = plain.add(CHAT, user_id="u", session_id="s", wait=True)
    assert len(items) == 2 and plain.list_jobs() == []
    result = plain.add_messages(
        CHAT, user_id="u", mem_variables=[{"name": "a", "description": "d"}]
    )
    assert result.extraction.state == "disabled" and "OMOIDE_LLM_BASE_URL" in (
        result.extraction.reason or ""
    )
    assert len(result.items) == 2 and plain.search("Shenzhen", user_id="u").hits


def test_asking_for_extraction_without_an_llm_raises_before_writing(plain: Memory) -> None:
    before = plain.store.admin.stats()
    with pytest.raises(FeatureDisabled, match="needs an LLM"):
        plain.add(CHAT, user_id="u", infer=True)
    with pytest.raises(FeatureDisabled):
        plain.add(CHAT, user_id="u", mem_variables=[{"name": "a", "description": "d"}])
    assert plain.store.admin.stats() == before
    assert plain.add(CHAT, user_id="u", infer=False)


def test_health_says_disabled_or_names_the_model(
    plain: Memory, mem: Memory, fake_llm: FakeLLMServer
) -> None:
    assert plain.health()["llm"]["status"] == "disabled"
    fake_llm.enqueue('{"ok": true}')  # health asks the LLM for real
    report = mem.health()["llm"]
    assert (report["status"], report["model"]) == ("ok", "openai-compat/fake-model")


def test_memory_builds_the_llm_from_settings(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    settings = Settings(llm_base_url=fake_llm.url, llm_model="fake-model", llm_timeout=2)
    with Memory(tmp_path / "m.db", embedder=HashEmbedder(), settings=settings, workers=1) as m:
        health = m.health()["llm"]  # an LLM of the settings: checked by its model list
        assert health["status"] == "ok" and health["checked"] == "GET /models"
        assert fake_llm.requests == []  # which costs no completion
        fake_llm.enqueue('{"facts": ["The user is Mei"]}')
        result = m.add_messages(
            CHAT,
            user_id="u",
            enable_user_profile=False,
            enable_episodic_memory=False,
            enable_graph=False,
            wait=True,
            timeout=10,
        )
        assert result.extraction.state == "done"  # run by the worker thread
        assert [i.text for i in result.extracted] == ["The user is Mei"]


def test_a_type_other_than_raw_is_not_extracted_unless_asked(
    mem: Memory, fake_llm: FakeLLMServer
) -> None:
    mem.add("The user likes tea", user_id="u", type=MemoryType.SEMANTIC)
    assert mem.list_jobs() == []
