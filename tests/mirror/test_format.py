"""The markdown of a memory file reads back as what was written, and what a person could
break is kept rather than guessed at."""

from __future__ import annotations

import pytest

from omoide.engine.mirror.format import parse, render
from omoide.engine.mirror.service import canonical, dir_part

TEXTS = [
    "plain",
    "two\nlines",
    "a blank line\n\nin the middle",
    "indented\n    code line",
    "- looks like an item\n- and another",
    "中文，日本語、한국어 mixed",  # noqa: RUF001 (CJK punctuation)
    "# not a heading once indented\n# see",
]


@pytest.mark.parametrize("text", TEXTS)
def test_a_text_round_trips(text: str) -> None:
    parsed = parse(render("semantic_memory", [("m1", text), ("m2", "next")], []))
    assert not parsed.malformed
    assert [(i.memory_id, i.text) for i in parsed.items] == [("m1", text), ("m2", "next")]
    assert canonical(text) == text


def test_an_unclosed_comment_hides_nothing() -> None:
    parsed = parse("# t\n\n<!-- a note never closed\n- still a memory <!-- id:m1 -->\n")
    assert [i.text for i in parsed.items] == ["still a memory"]
    assert [b.reason for b in parsed.malformed] == ["text outside a '- ' list item"]


def test_kept_blocks_are_written_back_once() -> None:
    content = "- a <!-- id:m1 --> b <!-- id:m2 -->\n\nstray\n"
    kept = parse(content).malformed
    again = parse(render("t", [], kept + kept))
    assert [b.raw for b in again.malformed] == [b.raw for b in kept]


@pytest.mark.parametrize(
    ("value", "name"),
    [("alice", "alice"), ("..", "%2E%2E"), ("a/b", "a%2Fb"), ("田中 太郎", "田中%20太郎")],
)
def test_ids_are_safe_directory_names(value: str, name: str) -> None:
    assert dir_part(value) == name
