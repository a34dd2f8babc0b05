"""Lenient parsing of real replies, and precise errors when it still fails (issue 16, point 5)."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from omoide.llm.parse import ParseError, parse_model, salvage_truncated


class Facts(BaseModel):
    facts: list[str]


class Entity(BaseModel):
    name: str
    type: str = "other"


class Graph(BaseModel):
    entities: list[Entity]
    relationships: list[dict[str, str]] = []


@pytest.mark.parametrize(
    ("reply", "facts"),
    [
        ('{"facts": ["The user writes\nletters by hand"]}', ["The user writes\nletters by hand"]),
        ('{"facts": ["tab\there", "bell\x07"]}', ["tab\there", "bell\x07"]),
        ('{"facts": ["a", "b",]}', ["a", "b"]),
        ('{"facts": ["a",\n  ],\n}', ["a"]),
        ('```json\n{\n  "facts": [\n    "one\ntwo",\n  ]\n}\n```', ["one\ntwo"]),
        ('Here: ["a", "b",]', ["a", "b"]),
        ('{"facts": ["a \\"quoted\\", still, one, fact",]}', ['a "quoted", still, one, fact']),
    ],
    ids=["newline", "control-chars", "trailing-comma", "trailing-commas", "fenced", "bare-list",
         "commas-in-strings"],
)  # fmt: skip
def test_sloppy_but_unambiguous_json_parses(reply: str, facts: list[str]) -> None:
    assert parse_model(reply, Facts).facts == facts


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ("The user likes tea.", "contains no JSON object (it reads 'The user likes tea.')"),
        ('{"facts": ["a" "b"]}', "invalid JSON at line 1 column 16 (char 15): Expecting ','"),
        ('{"facts": ["a",\n "b" "c"]}', "line 2 column 6"),
        ('{"facts": ["a", "b', "never closed (the reply ends inside it"),
        ('{"facts": "a"}', "does not match the schema: facts: Input should be a valid list"),
    ],
    ids=["prose", "missing-comma", "position", "unclosed", "schema"],
)
def test_failures_say_what_and_where(reply: str, message: str) -> None:
    with pytest.raises(ParseError) as caught:
        parse_model(reply, Facts)
    assert message in str(caught.value)


def test_the_error_shows_the_text_around_the_fault() -> None:
    with pytest.raises(ParseError) as caught:
        parse_model('{"facts": ["The user likes tea" "and coffee"]}', Facts)
    assert "near '" in str(caught.value) and 'tea" "and' in str(caught.value)


def test_an_unclosed_reply_is_not_mistaken_for_its_inner_list() -> None:
    # ["a", "b",] inside would validate as Facts by itself; it is a fragment of the object.
    with pytest.raises(ParseError, match="never closed"):
        parse_model('{"facts": ["a", "b",]', Facts)


def test_a_stray_brace_in_prose_does_not_hide_the_answer() -> None:
    assert parse_model('Use { carefully. {"facts": ["a"]}', Facts).facts == ["a"]


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"facts": ["a", "b", "c unfin', ["a", "b"]),
        ('{"facts": ["a", "b"', ["a"]),
        ('["a", "b', ["a"]),
    ],
)
def test_a_truncated_last_element_is_dropped(reply: str, expected: list[str]) -> None:
    salvaged = salvage_truncated(reply, Facts)
    assert salvaged is not None and salvaged.facts == expected


def test_a_truncated_object_in_a_list_is_dropped_whole() -> None:
    reply = '{"entities": [{"name": "Ada", "type": "person"}, {"name": "Bo", "ty'
    salvaged = salvage_truncated(reply, Graph)
    assert salvaged is not None
    assert salvaged.entities == [Entity(name="Ada", type="person")]
    cut_in_second_list = '{"entities": [{"name": "Ada"}], "relationships": [{"from": "Ada", "to'
    assert salvage_truncated(cut_in_second_list, Graph) == Graph(entities=[Entity(name="Ada")])


@pytest.mark.parametrize("reply", ['{"facts": ["only one unfinished', "no json", '{"facts": [1'])
def test_nothing_complete_means_nothing_salvaged(reply: str) -> None:
    assert salvage_truncated(reply, Facts) is None


def test_what_no_store_keeps_is_dropped_from_a_reply() -> None:
    """A model's NUL or half an emoji (a lone surrogate escape): written as facts, PostgreSQL
    refused them (the job failed) and SQLite kept them, and its export then did not import."""
    reply = '{"facts": ["likes\\u0000 green tea \\ud83d", "ok"]}'
    assert parse_model(reply, Facts).facts == ["likes green tea ", "ok"]
    cut = '{"facts": ["likes\\u0000 tea", "unfini'
    assert salvage_truncated(cut, Facts) == Facts(facts=["likes tea"])
