"""User profile entries: stable attributes of the user, as normalised attribute/value pairs."""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from omoide.extract._common import collapse, has_content
from omoide.llm.prompts import profile as profile_prompt
from omoide.llm.protocol import LLM
from omoide.types import Message

_NON_WORD = re.compile(r"[^\w]+", re.UNICODE)


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
    llm: LLM, messages: Sequence[Message], known: Sequence[str] = ()
) -> list[ProfileEntry]:
    """Profile entries stated in ``messages``; ``known`` (entry texts) keeps repeats out.

    Attributes become snake_case, values are whitespace-collapsed, empty entries and repeats
    (same attribute and value, ignoring case) are dropped. Several values per attribute are kept:
    two hobbies are two entries.

        >>> extract_profile(llm, [Message(content="I'm Mei, I live in Shenzhen")])
        [ProfileEntry(attribute='name', value='Mei'), ProfileEntry(attribute='home_city', ...)]
    """
    if not has_content(messages):
        return []
    done = profile_prompt.build(messages, known).run(llm)
    entries: dict[tuple[str, str], ProfileEntry] = {}
    for item in done.value.entries:
        attribute = normalize_attribute(item.attribute)
        value = collapse(item.value)
        if attribute and value:
            entries.setdefault(
                (attribute, value.casefold()), ProfileEntry(attribute=attribute, value=value)
            )
    return list(entries.values())


def normalize_attribute(name: str) -> str:
    """``"Home City "`` -> ``"home_city"``."""
    return _NON_WORD.sub("_", name.strip().lower()).strip("_")
