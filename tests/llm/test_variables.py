"""mem_variables: declaration rules, the coercion matrix, and extraction with defaults."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from omoide.errors import InvalidInput, LLMError
from omoide.extract import MemVariable, coerce, extract_variables
from omoide.llm.client import OpenAICompatLLM
from omoide.types import Message
from tests.fakes import FakeLLMServer

GOOD = [
    ("string", "Shenzhen", "Shenzhen"),
    ("string", 42, "42"),
    ("string", 3.5, "3.5"),
    ("string", True, "true"),
    ("boolean", True, True),
    ("boolean", "true", True),
    ("boolean", " Yes ", True),
    ("boolean", "on", True),
    ("boolean", 1, True),
    ("boolean", "no", False),
    ("boolean", "FALSE", False),
    ("boolean", 0, False),
    ("boolean", "0", False),
    ("integer", 42, 42),
    ("integer", "42", 42),
    ("integer", " -7 ", -7),
    ("integer", 42.0, 42),
    ("integer", "42.0", 42),
    ("number", "3.5", 3.5),
    ("number", 3.5, 3.5),
    ("number", 2, 2.0),
    ("number", "-1e3", -1000.0),
]

BAD = [
    ("string", None),
    ("string", ["a"]),
    ("string", {"a": 1}),
    ("string", float("nan")),
    ("boolean", "maybe"),
    ("boolean", 2),
    ("boolean", ""),
    ("boolean", None),
    ("integer", "forty-two"),
    ("integer", 42.5),
    ("integer", "42.5"),
    ("integer", True),
    ("integer", ""),
    ("integer", [1]),
    ("number", "three"),
    ("number", "nan"),
    ("number", "inf"),
    ("number", False),
    ("number", {}),
    ("array", "x"),
    ("object", 1),
    ("date", "2025-01-01"),
]


@pytest.mark.parametrize(("type_", "value", "expected"), GOOD)
def test_coerce_good_values(type_: str, value: Any, expected: Any) -> None:
    result = coerce(value, type_)
    assert result == expected
    assert type(result) is type(expected)


@pytest.mark.parametrize(("type_", "value"), BAD)
def test_coerce_rejects_impossible_values(type_: str, value: Any) -> None:
    with pytest.raises(InvalidInput):
        coerce(value, type_)


def test_mem_variable_defaults() -> None:
    var = MemVariable(name=" city ", description="Where the user lives")
    assert (var.name, var.type, var.required, var.default) == ("city", "string", True, None)


def test_mem_variable_coerces_its_default() -> None:
    assert MemVariable(name="n", description="d", type="integer", default="3").default == 3


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"type": "array"}, "not supported"),
        ({"type": "object"}, "not supported"),
        ({"type": "date"}, "string"),
        ({"descripton": "typo"}, "Extra inputs are not permitted"),
        ({"type": "integer", "default": "many"}, "not an integer"),
        ({"name": "  "}, "blank"),
    ],
)
def test_mem_variable_rejections(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        MemVariable(**{"name": "x", "description": "d", **fields})


def test_mem_variable_requires_description() -> None:
    with pytest.raises(ValidationError):
        MemVariable(name="x")  # type: ignore[call-arg]


VARIABLES = [
    MemVariable(name="city", description="Where the user lives", required=False),
    MemVariable(name="age", description="The user's age", type="integer"),
    MemVariable(name="vegan", description="Is the user vegan", type="boolean", default=False),
    MemVariable(name="budget", description="Budget in EUR", type="number", default=100),
]


def reply(**values: Any) -> str:
    return json.dumps({"values": [{"name": k, "value": v} for k, v in values.items()]})


def test_extract_variables_coerces_and_applies_defaults(
    fake_llm: FakeLLMServer, llm: OpenAICompatLLM
) -> None:
    fake_llm.enqueue(reply(city="Shenzhen", age="41", vegan=None, budget="unknown", mood="happy"))
    messages = [Message(content="I live in Shenzhen and I'm 41")]
    assert extract_variables(llm, messages, VARIABLES) == {
        "city": "Shenzhen",
        "age": 41,
        "vegan": False,
        "budget": 100.0,
    }
    sent = fake_llm.requests[0]["messages"][1]["content"]
    assert '"type": "integer"' in sent


def test_defaults_never_overwrite_known_values(
    fake_llm: FakeLLMServer, llm: OpenAICompatLLM
) -> None:
    fake_llm.enqueue(reply(city=None, age=None, vegan=None, budget=None))
    result = extract_variables(
        llm, [Message(content="hello")], VARIABLES, current={"vegan": True, "city": "Osaka"}
    )
    assert result == {"budget": 100.0}, "missing and not defaulted -> absent"


def test_uncoercible_value_raises_with_raw(fake_llm: FakeLLMServer, llm: OpenAICompatLLM) -> None:
    fake_llm.enqueue(reply(age="about forty"))
    with pytest.raises(LLMError, match="'age'") as caught:
        extract_variables(llm, [Message(content="I'm about forty")], VARIABLES)
    assert caught.value.retryable is False
    assert "about forty" in str(caught.value.fields["raw"])


def test_no_variables_or_no_text_makes_no_call(
    fake_llm: FakeLLMServer, llm: OpenAICompatLLM
) -> None:
    assert extract_variables(llm, [Message(content="hi")], []) == {}
    assert extract_variables(llm, [Message(content="")], VARIABLES) == {
        "vegan": False,
        "budget": 100.0,
    }
    assert fake_llm.requests == []


def test_duplicate_names_are_rejected(llm: OpenAICompatLLM) -> None:
    with pytest.raises(InvalidInput):
        extract_variables(llm, [Message(content="hi")], [VARIABLES[0], VARIABLES[0]])
