"""Issue 16, point 12: profile entries are reconciled like facts. A changed city supersedes
the old entry (history kept), not a second valid one; repeats are no-ops; hobbies add up."""

from __future__ import annotations

import json

import pytest

from omoide import Memory, MemoryItem, MemoryType, SearchFilters
from omoide.engine.extraction.profile_merge import multi_valued
from tests.extraction.conftest import script
from tests.fakes import FakeLLMServer

PROFILE_ONLY = {
    "enable_semantic_memory": False,
    "enable_episodic_memory": False,
    "enable_summary_memory": False,
    "enable_graph": False,
}


def entries(memory: Memory, *, include_invalid: bool = False) -> list[MemoryItem]:
    filters = SearchFilters(types=[MemoryType.USER_PROFILE], include_invalid=include_invalid)
    return memory.get_all(user_id="u", filters=filters).items


def profile(memory: Memory, *, include_invalid: bool = False) -> list[str]:
    return sorted(i.text for i in entries(memory, include_invalid=include_invalid))


def tell(memory: Memory, fake: FakeLLMServer, entries: dict[str, str], text: str) -> str:
    script(fake, profile=entries)
    result = memory.add_messages([{"content": text}], user_id="u", wait=True, **PROFILE_ONLY)
    assert result.extraction.state == "done", result.extraction
    return str(result.extraction.steps["profile"]["detail"])


def test_a_changed_city_updates_the_entry_and_keeps_its_history(
    mem: Memory, fake_llm: FakeLLMServer
) -> None:
    tell(mem, fake_llm, {"home_city": "Osaka", "hobby": "climbing"}, "I live in Osaka, I climb.")
    detail = tell(mem, fake_llm, {"home_city": "Lisbon"}, "I moved to Lisbon.")
    assert detail == "0 added, 1 updated, 0 unchanged"
    assert profile(mem) == ["hobby: climbing", "home city: Lisbon"]
    assert "home city: Osaka" in profile(mem, include_invalid=True)
    [lisbon] = [i for i in entries(mem) if i.text == "home city: Lisbon"]
    history = mem.history(lisbon.id, user_id="u")
    assert any(h.old_text == "home city: Osaka" for h in history), history


def test_repeats_are_no_ops_and_several_hobbies_add_up(
    mem: Memory, fake_llm: FakeLLMServer
) -> None:
    tell(mem, fake_llm, {"hobby": "climbing", "name": "Ana"}, "I am Ana and I climb.")
    # the LLM says it again, in other case and punctuation; and a new hobby
    again = [("hobby", "Climbing"), ("hobby", "chess"), ("name", "ana.")]
    fake_llm.enqueue(json.dumps({"entries": [{"attribute": a, "value": v} for a, v in again]}))
    result = mem.add_messages(
        [{"content": "I'm Ana, I climb and play chess."}], user_id="u", wait=True, **PROFILE_ONLY
    )
    assert result.extraction.steps["profile"]["detail"] == "1 added, 0 updated, 2 unchanged"
    assert profile(mem) == ["hobby: chess", "hobby: climbing", "name: Ana"]
    assert tell(mem, fake_llm, {"name": "Ana"}, "Ana here.") == "nothing new about the user"


@pytest.mark.parametrize(
    ("attribute", "several"),
    [("hobby", True), ("spoken_language", True), ("pets", True), ("home_city", False),
     ("favorite_drink", False), ("occupation", False), ("address", False)],
)  # fmt: skip
def test_which_attributes_hold_several_values(attribute: str, several: bool) -> None:
    assert multi_valued(attribute) is several
