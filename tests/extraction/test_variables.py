"""Typed variables (Jiuwen mem_variables) through the Engine: coerced, or refused clearly."""

from __future__ import annotations

from typing import Any

import pytest

from omoide import InvalidInput, Memory, MemVariable
from omoide.types import JobState
from tests.extraction.conftest import script
from tests.fakes import FakeLLMServer

NOTHING_ELSE = {"enable_long_term_mem": False}


@pytest.mark.parametrize(
    ("type_", "answer", "stored"),
    [
        ("string", "Shenzhen", "Shenzhen"),
        ("string", 12, "12"),
        ("string", True, "true"),
        ("boolean", "yes", True),
        ("boolean", "off", False),
        ("boolean", 1, True),
        ("integer", "41", 41),
        ("integer", 41.0, 41),
        ("number", "1.75", 1.75),
        ("number", 3, 3.0),
    ],
)
def test_extracted_values_are_coerced_to_their_type(
    mem: Memory, fake_llm: FakeLLMServer, type_: str, answer: Any, stored: Any
) -> None:
    script(fake_llm, variables={"v": answer})
    declared = [{"name": "v", "description": "a value", "type": type_}]
    result = mem.add_messages(
        "hello", user_id="u", mem_variables=declared, wait=True, **NOTHING_ELSE
    )
    assert result.extraction.state == "done"
    value = mem.get_variables(["v"], user_id="u")["v"]
    assert value == stored and type(value) is type(stored)


@pytest.mark.parametrize(
    ("definition", "message"),
    [
        ({"name": "tags", "description": "d", "type": "array"}, "not supported"),
        ({"name": "prefs", "description": "d", "type": "object"}, "not supported"),
        ({"name": "when", "description": "d", "type": "date"}, "type"),
        ({"name": "city", "descripton": "typo"}, "descripton"),
        ({"name": "city"}, "description"),
        ({"name": "  ", "description": "d"}, "blank"),
        ({"name": "age", "description": "d", "type": "integer", "default": "abc"}, "integer"),
    ],
)
def test_bad_definitions_are_refused_before_anything_is_written(
    mem: Memory, definition: dict[str, Any], message: str
) -> None:
    before = mem.store.admin.stats()
    for call in (mem.add, mem.add_messages):
        with pytest.raises(InvalidInput, match=message):
            call("hello", user_id="u", mem_variables=[definition])
    assert mem.store.admin.stats() == before


def test_duplicate_names_and_non_lists_are_refused(mem: Memory) -> None:
    twice = [{"name": "a", "description": "d"}, {"name": "a", "description": "e"}]
    with pytest.raises(InvalidInput, match="duplicate"):
        mem.add("hello", user_id="u", mem_variables=twice)
    with pytest.raises(InvalidInput, match="list"):
        mem.add("hello", user_id="u", mem_variables={"name": "a", "description": "d"})  # type: ignore[arg-type]


def test_an_uncoercible_answer_fails_the_job_and_writes_nothing(
    mem: Memory, fake_llm: FakeLLMServer
) -> None:
    script(fake_llm, variables={"age": "forty-one"})
    declared = [MemVariable(name="age", description="age", type="integer")]
    # the only step: with others, they would run and the job end "partial" (test_failures)
    result = mem.add_messages(
        "hello", user_id="u", mem_variables=declared, wait=True, **NOTHING_ELSE
    )
    assert result.extraction.state == "failed"
    assert result.extraction.steps["variables"]["status"] == "failed"
    assert "variable 'age'" in (result.extraction.reason or "")
    assert mem.get_variables(user_id="u") == {}
    assert mem.store.jobs.get_job(result.extraction.job_id or 0).state is JobState.FAILED


def test_defaults_fill_only_unknown_variables(mem: Memory, fake_llm: FakeLLMServer) -> None:
    declared = [{"name": "lang", "description": "language", "default": "en", "required": False}]
    script(fake_llm, variables={"lang": None})
    mem.add("hi", user_id="u", mem_variables=declared, wait=True, **NOTHING_ELSE)
    assert mem.get_variables(user_id="u") == {"lang": "en"}
    mem.update_variables({"lang": "ja"}, user_id="u")
    script(fake_llm, variables={"lang": None})
    mem.add("hi again", user_id="u", mem_variables=declared, wait=True, **NOTHING_ELSE)
    assert mem.get_variables(user_id="u") == {"lang": "ja"}


def test_update_get_delete(plain: Memory) -> None:
    stored = plain.update_variables(
        {"city": "Shenzhen", "age": 41, "vegetarian": True, "height": 1.75}, user_id="u"
    )
    assert stored == {"city": "Shenzhen", "age": 41, "vegetarian": True, "height": 1.75}
    # an existing variable keeps its type: strings from a JSON client are coerced to it
    assert plain.update_variables({"age": "42", "vegetarian": "no"}, user_id="u") == {
        "age": 42,
        "vegetarian": False,
    }
    assert plain.update_variables({"score": "7"}, types={"score": "integer"}, user_id="u") == {
        "score": 7
    }
    assert plain.get_variables(["age", "missing"], user_id="u") == {"age": 42}
    assert plain.get_variables(user_id="other") == {}
    assert plain.delete_variables(["city", "missing", "age"], user_id="u") == ["city", "age"]
    assert sorted(plain.get_variables(user_id="u")) == ["height", "score", "vegetarian"]


@pytest.mark.parametrize(
    "values",
    [
        {"tags": ["a", "b"]},
        {"prefs": {"a": 1}},
        {"nothing": None},
        {"age": "forty"},  # age is an integer variable
        {"ok": "fine", "age": 1.5},  # one bad value: nothing written
        {"": "blank name"},
    ],
)
def test_update_refuses_what_is_not_a_flat_typed_value(
    plain: Memory, values: dict[str, Any]
) -> None:
    plain.update_variables({"age": 41}, user_id="u")
    with pytest.raises(InvalidInput):
        plain.update_variables(values, user_id="u")
    assert plain.get_variables(user_id="u") == {"age": 41}


def test_unknown_declared_type_is_refused(plain: Memory) -> None:
    with pytest.raises(InvalidInput, match="unknown variable type"):
        plain.update_variables({"x": "1"}, types={"x": "array"}, user_id="u")
