"""The library path refuses what the HTTP layer refuses (issue 15, item 1 in-process): a lone
surrogate or NUL in any stored string, an integer SQLite cannot hold. Each is an
``InvalidInput``, nothing is stored, and the tenant stays readable."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from omoide import InvalidInput, Memory, SearchFilters

BAD = "bad \ud800 value"


def _still_readable(memory: Memory) -> None:
    page = memory.get_all(user_id="alice")
    assert [i.text for i in page.items] == ["a good note"]
    assert memory.search("note", user_id="alice").hits
    assert [s.id for s in memory.list_sessions(user_id="alice")[0]] == ["s1"]


WRITES: dict[str, Callable[[Memory, str], Any]] = {
    "add metadata value": lambda m, _: m.add("tea", user_id="alice", metadata={"x": BAD}),
    "add metadata key": lambda m, _: m.add("tea", user_id="alice", metadata={BAD: 1}),
    "add nested metadata": lambda m, _: m.add("tea", user_id="alice", metadata={"a": [{"b": BAD}]}),
    "add huge integer": lambda m, _: m.add("tea", user_id="alice", metadata={"n": 2**64}),
    "add role": lambda m, _: m.add(
        [{"role": BAD, "content": "tea"}], user_id="alice", session_id="s1"
    ),
    "add session id": lambda m, _: m.add("tea", user_id="alice", session_id=BAD),
    "add user id": lambda m, _: m.add("tea", user_id=BAD),
    "update metadata": lambda m, i: m.update(i, metadata={"x": BAD}, user_id="alice"),
    "session metadata": lambda m, _: m.update_session("s1", user_id="alice", metadata={"x": BAD}),
    "session name": lambda m, _: m.create_session("s2", user_id="alice", name=BAD),
    "summary metadata": lambda m, _: m.create_summary(
        "s1", "a summary", user_id="alice", metadata={"x": BAD}
    ),
}


@pytest.mark.parametrize("case", sorted(WRITES))
def test_an_unstorable_value_is_refused_and_nothing_is_stored(
    hash_memory: Memory, case: str
) -> None:
    [item] = hash_memory.add("a good note", user_id="alice")
    hash_memory.create_session("s1", user_id="alice")
    with pytest.raises(InvalidInput):
        WRITES[case](hash_memory, item.id)
    _still_readable(hash_memory)


def test_search_and_list_filters_are_checked(hash_memory: Memory) -> None:
    hash_memory.add("a good note", user_id="alice")
    bad = SearchFilters(metadata={"x": BAD})
    with pytest.raises(InvalidInput, match=r"filters\.metadata\.x"):
        hash_memory.search("note", user_id="alice", filters=bad)
    with pytest.raises(InvalidInput, match=r"filters\.metadata\.x"):
        hash_memory.get_all(user_id="alice", filters=bad)
    with pytest.raises(InvalidInput):
        hash_memory.search("note", user_id="alice", filters=SearchFilters(metadata={"n": 2**70}))
