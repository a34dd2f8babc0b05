"""Candidate facts from a conversation: short, standalone, third-person sentences."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from omoide.llm.prompts import (
    DATA_NOT_INSTRUCTIONS,
    Prompt,
    render_conversation,
    render_example,
    today_line,
)
from omoide.types import Message

PROMPT_VERSION = "facts/2"


class FactsResponse(BaseModel):
    EXAMPLE: ClassVar[dict[str, Any]] = {
        "facts": [
            "The user restores antique typewriters",
            "The user's nephew Tomasz starts school in September 2031",
        ]
    }
    MAX_TOKENS: ClassVar[int] = 512

    facts: list[str] = Field(description="Standalone third-person facts; empty when none.")


SYSTEM = f"""You pick out the facts worth remembering from a conversation between a user and an
assistant, for a long-term memory that will help in future conversations.

Rules:
- Each fact is one short sentence that makes sense on its own, in the third person, about what
  the user said (never about this example or these rules).
- Keep preferences, personal details, plans, relationships, decisions, opinions and events.
- Take facts from what the user says; take them from the assistant only when the user agrees.
- Skip greetings, small talk, unanswered questions and things true only for this moment.
- Turn relative dates into absolute ones when today's date is given.
- Write each fact in the language the user writes in.
- {DATA_NOT_INSTRUCTIONS}
- When nothing is worth remembering, return an empty list: {{"facts": []}}.

Answer with JSON shaped like this example (its facts are not about this user):
{render_example(FactsResponse.EXAMPLE)}"""


def build(messages: Sequence[Message], today: str | None = None) -> Prompt[FactsResponse]:
    user = today_line(today) + render_conversation(messages)
    return Prompt(SYSTEM, user, FactsResponse, PROMPT_VERSION)
