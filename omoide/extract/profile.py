"""User profile entries: stable attributes of the user, as normalised attribute/value pairs."""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from omoide.extract._common import (
    Drops,
    collapse,
    copies_example,
    folded_set,
    has_content,
    is_placeholder,
)
from omoide.llm.prompts import profile as profile_prompt
from omoide.llm.protocol import LLM
from omoide.types import Message

_NON_WORD = re.compile(r"[^\w]+", re.UNICODE)
MAX_ATTRIBUTE_CHARS = 64
MAX_VALUE_CHARS = 200
_EXAMPLES = folded_set(e["value"] for e in profile_prompt.ProfileResponse.EXAMPLE["entries"])


class ProfileEntry(BaseModel):
    """One attribute of the user, e.g. ``ProfileEntry(attribute="home_city", value="Shenzhen")``.

    ``text`` is what gets stored and searched as a ``user_profile`` memory.
    """

    model_config = ConfigDict(frozen=True)

    attribute: str
    value: str

    @property
    def text(self) -> str:
        return f"{self.attribute.replace('_', ' ')}: {self.value}"


def extract_profile(
    llm: LLM,
    messages: Sequence[Message],
    known: Sequence[str] = (),
    *,
    drops: Drops | None = None,
) -> list[ProfileEntry]:
    """Profile entries stated in ``messages``; ``known`` (entry texts) keeps repeats out.

    Attributes become snake_case, values are whitespace-collapsed, empty entries and repeats
    (same attribute and value, ignoring case) are dropped. Several values per attribute are kept:
    two hobbies are two entries. Placeholder values (``"..."``), the prompt's example values
    (unless the conversation says them) and over-long entries are dropped and counted in ``drops``.

        >>> extract_profile(llm, [Message(content="I'm Mei, I live in Shenzhen")])
        [ProfileEntry(attribute='name', value='Mei'), ProfileEntry(attribute='home_city', ...)]
    """
    if not has_content(messages):
        return []
    done = profile_prompt.build(messages, known).run(llm)
    entries: dict[tuple[str, str], ProfileEntry] = {}
    drops = drops if drops is not None else Drops()
    for item in done.value.entries:
        attribute = normalize_attribute(item.attribute)
        value = collapse(item.value)
        if not collapse(item.attribute) or not value:
            drops.add("empty", f"{item.attribute}: {item.value}", "profile entry")
            continue
        reason = _rejection(attribute, value, messages)
        if reason is not None:
            drops.add(reason, f"{attribute}: {value}", "profile entry")
            continue
        entries.setdefault(
            (attribute, value.casefold()), ProfileEntry(attribute=attribute, value=value)
        )
    return list(entries.values())


def _rejection(attribute: str, value: str, messages: Sequence[Message]) -> str | None:
    if not attribute or is_placeholder(value) or is_placeholder(attribute):
        return "placeholder"  # an attribute of punctuation only normalises to ""
    if len(attribute) > MAX_ATTRIBUTE_CHARS or len(value) > MAX_VALUE_CHARS:
        return "too_long"
    if copies_example(value, _EXAMPLES, messages):
        return "example"
    return None


def normalize_attribute(name: str) -> str:
    """``"Home City "`` -> ``"home_city"``."""
    return _NON_WORD.sub("_", name.strip().lower()).strip("_")
