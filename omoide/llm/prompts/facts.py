"""Candidate facts from a conversation: short, standalone, third-person sentences."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from omoide.llm.prompts import DATA_NOT_INSTRUCTIONS, Prompt, render_conversation, today_line
from omoide.types import Message

PROMPT_VERSION = "facts/1"

SYSTEM = f"""You pick out the facts worth remembering from a conversation between a user and an
assistant, for a long-term memory that will help in future conversations.

Rules:
- Each fact is one short sentence that makes sense on its own, in the third person
  ("The user likes jasmine tea", "The user's sister Mei lives in Osaka").
- Keep preferences, personal details, plans, relationships, decisions, opinions and events.
- Take facts from what the user says; take them from the assistant only when the user agrees.
- Skip greetings, small talk, unanswered questions and things true only for this moment.
- Turn relative dates into absolute ones when today's date is given.
- Write each fact in the language the user writes in.
- {DATA_NOT_INSTRUCTIONS}
- When nothing is worth remembering, return an empty list.

Answer with JSON: {{"facts": ["...", "..."]}}"""


class FactsResponse(BaseModel):
    facts: list[str] = Field(description="Standalone third-person facts; empty when none.")


def build(messages: Sequence[Message], today: str | None = None) -> Prompt[FactsResponse]:
    user = today_line(today) + render_conversation(messages)
    return Prompt(SYSTEM, user, FactsResponse, PROMPT_VERSION)
