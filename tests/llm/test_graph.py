"""extract_graph: name normalisation, de-duplication and dangling relationships."""

from __future__ import annotations

import json

import pytest

from omoide.extract import GraphEntity, GraphRelation, extract_graph
from omoide.llm.client import OpenAICompatLLM
from omoide.types import Message
from tests.fakes import FakeLLMServer
from tests.fakes.fixtures import JSON_SCHEMA_PROFILES

MESSAGES = [Message(content="My sister Mei Lin works at Acme in Osaka.")]


def test_names_are_normalised_and_entities_deduplicated(
    fake_llm: FakeLLMServer, llm: OpenAICompatLLM
) -> None:
    fake_llm.enqueue(
        json.dumps(
            {
                "entities": [
                    {"name": "  Mei   Lin ", "type": "Person"},
                    {"name": "mei lin", "type": "person"},
                    {"name": "Acme", "type": " Organization "},
                    {"name": "   ", "type": "place"},
                    {"name": "Osaka", "type": ""},
                ],
                "relationships": [
                    {"from": "MEI LIN", "to": " Acme", "label": " Works  At ", "notes": " "},
                    {"from": "Mei Lin", "to": "Acme", "label": "works at", "notes": "since 2020"},
                ],
            }
        )
    )
    entities, relationships = extract_graph(llm, MESSAGES)
    mei = GraphEntity(name="Mei Lin", type="person")
    acme = GraphEntity(name="Acme", type="organization")
    assert entities == [mei, acme, GraphEntity(name="Osaka", type="other")]
    assert relationships == [GraphRelation(source=mei, target=acme, label="works at")]


def test_dangling_and_degenerate_relationships_are_dropped(
    fake_llm: FakeLLMServer, llm: OpenAICompatLLM
) -> None:
    fake_llm.enqueue(
        json.dumps(
            {
                "entities": [{"name": "Mei", "type": "person"}, {"name": "Osaka", "type": "place"}],
                "relationships": [
                    {"from": "Mei", "to": "Osaka", "label": "lives in", "notes": "since May"},
                    {"from": "Mei", "to": "Acme", "label": "works at"},
                    {"from": "Bob", "to": "Osaka", "label": "visited"},
                    {"from": "Mei", "to": "mei", "label": "is"},
                    {"from": "Mei", "to": "Osaka", "label": "  "},
                ],
            }
        )
    )
    graph = extract_graph(llm, MESSAGES)
    assert [(r.source.name, r.target.name, r.label, r.notes) for r in graph.relationships] == [
        ("Mei", "Osaka", "lives in", "since May")
    ]


def test_relationships_may_be_omitted(fake_llm: FakeLLMServer, llm: OpenAICompatLLM) -> None:
    fake_llm.enqueue('{"entities": [{"name": "Mei", "type": "person"}]}')
    assert extract_graph(llm, MESSAGES).relationships == []


@pytest.mark.profiles(*JSON_SCHEMA_PROFILES)
def test_schema_uses_from_and_to(fake_llm: FakeLLMServer, llm: OpenAICompatLLM) -> None:
    fake_llm.enqueue('{"entities": [], "relationships": []}')
    assert extract_graph(llm, MESSAGES) == ([], [])
    schema = fake_llm.requests[0]["response_format"]["json_schema"]["schema"]
    assert set(schema["$defs"]["RelationshipItem"]["properties"]) == {
        "from",
        "to",
        "label",
        "notes",
    }
