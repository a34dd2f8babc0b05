"""Helpers shared by the extractors: normalising text and refusing what is not a real answer.

Small models copy their prompt: a template's ``"..."``, a ``<fact>`` placeholder, or the
prompt's own example ("The user restores antique typewriters") came back as answers and were
stored as memories of users who never said them. Each extractor drops such items one by one
(the rest of the answer is kept) and counts them in a ``Drops``.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from omoide.errors import LLMError
from omoide.llm.errors import bad_answer
from omoide.llm.protocol import Completion
from omoide.types import Message

log = logging.getLogger("omoide.extract")

_SPACES = re.compile(r"\s+")
# Only punctuation ("...", "…", "-", "___"), or a bracketed slot: "<fact>", "[name]", "{value}".
_PLACEHOLDER = re.compile(r"[\W_]*|<[^<>]{0,40}>|\[[^\[\]]{0,40}\]|\{[^{}]{0,40}\}")
# Template words no real answer consists of ("name" is not one: it is a profile attribute).
_PLACEHOLDER_WORDS = frozenset(
    {"string", "text", "fact", "value", "entity", "example", "placeholder", "todo", "tbd", "xxx"}
)
_SAMPLES = 10


def collapse(text: str) -> str:
    """Strip and turn every run of whitespace into one space."""
    return _SPACES.sub(" ", text).strip()


def has_content(messages: Sequence[Message]) -> bool:
    return any(m.content.strip() for m in messages)


def unusable(reason: str, done: Completion[Any]) -> LLMError:
    """The answer parsed but makes no sense (an unknown id, an impossible value): not retryable."""
    return bad_answer(f"unusable LLM answer: {reason}", raw=done.raw)


def is_placeholder(text: str) -> bool:
    """``""``, ``"..."``, ``"<fact>"``, ``"[name]"``, ``"string"``: a template slot, not a value."""
    folded = collapse(text).casefold()
    return bool(_PLACEHOLDER.fullmatch(folded)) or folded in _PLACEHOLDER_WORDS


def folded_set(texts: Iterable[str]) -> frozenset[str]:
    return frozenset(collapse(t).casefold() for t in texts)


def copies_example(text: str, examples: frozenset[str], messages: Sequence[Message]) -> bool:
    """True when ``text`` is one of the prompt's ``examples`` and the conversation never says it
    (a user who really has a nephew called Tomasz keeps him)."""
    folded = collapse(text).casefold()
    if folded not in examples:
        return False
    return not any(folded in collapse(m.content).casefold() for m in messages)


@dataclass
class Drops:
    """What an extractor threw away, by reason: "empty", "placeholder", "example", "too_long".

    >>> drops = Drops()
    >>> facts = extract_facts(llm, messages, drops=drops)
    >>> drops.counts
    Counter({'placeholder': 1})
    """

    counts: Counter[str] = field(default_factory=Counter)
    samples: list[tuple[str, str]] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def add(self, reason: str, text: str, what: str) -> None:
        self.counts[reason] += 1
        if len(self.samples) < _SAMPLES:
            self.samples.append((reason, text[:80]))
        log.info("dropped a %s from the LLM answer (%s): %r", what, reason, text[:80])
