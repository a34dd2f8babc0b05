"""Helpers shared by the extractors."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from omoide.errors import LLMError
from omoide.llm.protocol import Completion
from omoide.types import Message

_SPACES = re.compile(r"\s+")


def collapse(text: str) -> str:
    """Strip and turn every run of whitespace into one space."""
    return _SPACES.sub(" ", text).strip()


def has_content(messages: Sequence[Message]) -> bool:
    return any(m.content.strip() for m in messages)


def unusable(reason: str, done: Completion[Any]) -> LLMError:
    """The answer parsed but makes no sense (an unknown id, an impossible value): not retryable."""
    return LLMError(f"unusable LLM answer: {reason}", retryable=False, raw=done.raw)
