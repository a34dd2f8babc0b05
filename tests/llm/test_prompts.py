"""Prompts show neutral, filled examples, and extractors refuse placeholders and copies of them
(issue 16, points 6, 7, 8, 9), through the real client against every server profile."""

from __future__ import annotations

import json
from types import ModuleType

import pytest
from pydantic import BaseModel

from omoide.compat.wilmer import prompt as wilmer
from omoide.errors import LLMError
from omoide.extract import (
    Drops,
    FactOp,
    MemVariable,
    extract_facts,
    extract_graph,
    extract_profile,
    extract_variables,
    reconcile,
    summarize,
)
from omoide.extract.facts import MAX_FACT_CHARS
from omoide.llm.client import OpenAICompatLLM
from omoide.llm.formats import with_example_hint
from omoide.llm.prompts import facts, graph, profile, summary, variables
from omoide.llm.prompts import reconcile as reconcile_prompt
from omoide.types import Message
from tests.fakes import FakeLLMServer

PROMPTS: list[tuple[ModuleType, type[BaseModel]]] = [
    (facts, facts.FactsResponse),
    (graph, graph.GraphResponse),
    (profile, profile.ProfileResponse),
    (reconcile_prompt, reconcile_prompt.ReconcileResponse),
    (summary, summary.SummaryResponse),
    (variables, variables.VariablesResponse),
]
# Examples of the old prompts that were stored as facts of users who never said them.
STORED_BEFORE = ["jasmine tea", "Mei", "Osaka", "Shenzhen", "Lisbon", '"..."', "offsite"]
CHAT = [Message(content="I repair old radios. My brother Piotr lives in Gdynia.")]


def system_of(module: ModuleType) -> str:
    return str(module.SYSTEM)


@pytest.mark.parametrize("module", [m for m, _ in PROMPTS] + [wilmer], ids=lambda m: m.__name__)
def test_prompts_carry_no_example_that_was_stored_and_no_template_slot(module: ModuleType) -> None:
    text = system_of(module)
    assert [word for word in STORED_BEFORE if word in text] == []
    assert "..." not in text


@pytest.mark.parametrize(("module", "schema"), PROMPTS, ids=lambda p: getattr(p, "__name__", ""))
def test_each_prompt_shows_its_filled_example_once(
    module: ModuleType, schema: type[BaseModel]
) -> None:
    example = json.dumps(schema.EXAMPLE, ensure_ascii=False)  # type: ignore[attr-defined]
    schema.model_validate(schema.EXAMPLE)  # type: ignore[attr-defined]
    system = system_of(module).replace("{{", "{").replace("}}", "}")
    assert system.count(example) == 1
    # the client's fallback hint finds it there and does not paste a second copy
    assert with_example_hint(system, "json_object", schema) == system
    assert '"properties"' not in with_example_hint("Answer in JSON.", "prompt", schema)


def test_placeholders_examples_and_overlong_facts_are_dropped_alone(
    fake_llm: FakeLLMServer, llm: OpenAICompatLLM
) -> None:
    long_fact = "The user " + "talks " * 200
    said = [
        "The user repairs old radios",
        "...",
        "<fact>",
        "",
        "The user restores antique typewriters",  # the prompt's example
        long_fact,
        "The user's brother Piotr lives in Gdynia",
    ]
    fake_llm.enqueue(json.dumps({"facts": said}))
    drops = Drops()
    assert extract_facts(llm, CHAT, drops=drops) == [
        "The user repairs old radios",
        "The user's brother Piotr lives in Gdynia",
    ]
    assert drops.counts == {"placeholder": 2, "empty": 1, "example": 1, "too_long": 1}
    assert len(long_fact) > MAX_FACT_CHARS


def test_an_example_the_user_really_says_is_kept(
    fake_llm: FakeLLMServer, llm: OpenAICompatLLM
) -> None:
    fake_llm.enqueue(json.dumps({"entries": [{"attribute": "hobby", "value": "rowing"}]}))
    chat = [Message(content="On Sundays I go rowing.")]
    assert [e.value for e in extract_profile(llm, chat)] == ["rowing"]
    fake_llm.enqueue(json.dumps({"entries": [{"attribute": "hobby", "value": "rowing"}]}))
    drops = Drops()
    assert extract_profile(llm, CHAT, drops=drops) == []
    assert drops.counts == {"example": 1}


def test_profile_placeholders_are_dropped(fake_llm: FakeLLMServer, llm: OpenAICompatLLM) -> None:
    entries = [
        {"attribute": "name", "value": "Ada"},
        {"attribute": "home_city", "value": "..."},
        {"attribute": "...", "value": "x"},
        {"attribute": "job", "value": "<value>"},
    ]
    fake_llm.enqueue(json.dumps({"entries": entries}))
    drops = Drops()
    assert [e.text for e in extract_profile(llm, CHAT, drops=drops)] == ["name: Ada"]
    assert drops.counts == {"placeholder": 3}


def test_entity_types_come_from_the_vocabulary(
    fake_llm: FakeLLMServer, llm: OpenAICompatLLM
) -> None:
    entities = [
        {"name": " Ola  Nowak ", "type": "Brother of the user, a sailor"},
        {"name": "Piotr", "type": "Person"},
        {"name": "Gdynia", "type": "City"},
        {"name": "Radio Club", "type": "club"},
        {"name": "Tomasz", "type": "person"},  # the prompt's example, not in the chat
        {"name": "<name>", "type": "person"},
        {"name": "Zenith", "type": "spaceship"},
    ]
    fake_llm.enqueue(json.dumps({"entities": entities, "relationships": []}))
    drops = Drops()
    found = extract_graph(llm, CHAT, drops=drops).entities
    assert [(e.name, e.type) for e in found] == [
        ("Ola Nowak", "other"),
        ("Piotr", "person"),
        ("Gdynia", "location"),
        ("Radio Club", "organization"),
        ("Zenith", "other"),
    ]
    assert drops.counts == {"example": 1, "placeholder": 1}
    types = graph.GraphResponse.model_json_schema()["$defs"]["EntityItem"]["properties"]["type"]
    assert types["enum"] == list(graph.ENTITY_TYPES), "servers that take a schema enforce it"


def test_placeholder_and_example_variable_values_are_not_stated(
    fake_llm: FakeLLMServer, llm: OpenAICompatLLM
) -> None:
    declared = [
        MemVariable(name="city", description="Where the user lives"),
        MemVariable(name="pet", description="The user's pet's name"),
        MemVariable(name="brother", description="The user's brother's name"),
    ]
    values = [
        {"name": "city", "value": "..."},
        {"name": "pet", "value": "Biscuit"},
        {"name": "brother", "value": "Piotr"},
    ]
    fake_llm.enqueue(json.dumps({"values": values}))
    drops = Drops()
    assert extract_variables(llm, CHAT, declared, drops=drops) == {"brother": "Piotr"}
    assert drops.counts == {"placeholder": 1, "example": 1}


@pytest.mark.parametrize("text", ["...", summary.SummaryResponse.EXAMPLE["summary"]])
def test_a_placeholder_or_example_summary_is_refused(
    fake_llm: FakeLLMServer, llm: OpenAICompatLLM, text: str
) -> None:
    fake_llm.enqueue(json.dumps({"summary": text}))
    with pytest.raises(LLMError, match="unusable LLM answer") as caught:
        summarize(llm, CHAT, previous="The user repairs radios.")
    assert caught.value.retryable is False


def test_reconcile_drops_placeholder_and_example_operations(
    fake_llm: FakeLLMServer, llm: OpenAICompatLLM
) -> None:
    ops = [
        {"op": "ADD", "id": None, "text": "..."},
        {"op": "ADD", "id": None, "text": "The user restores antique typewriters"},
        {"op": "UPDATE", "id": "0", "text": "The user repairs old radios and clocks"},
    ]
    fake_llm.enqueue(json.dumps({"operations": ops}))
    drops = Drops()
    result = reconcile(
        llm, ["The user repairs clocks"], [("mem_1", "The user repairs old radios")], drops=drops
    )
    assert result == [
        FactOp(op="UPDATE", text="The user repairs old radios and clocks", target_id="mem_1")
    ]
    assert drops.counts == {"placeholder": 1, "example": 1}
