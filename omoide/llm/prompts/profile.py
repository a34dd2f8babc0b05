"""User profile entries: stable attributes of the user as attribute/value pairs."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from omoide.llm.prompts import (
    DATA_NOT_INSTRUCTIONS,
    Prompt,
    render_conversation,
    render_json_block,
)
from omoide.types import Message

PROMPT_VERSION = "profile/1"

SYSTEM = f"""You maintain a profile of the user from their conversations with an assistant.
Record stable attributes of the user only (not of the assistant or of other people): name, age,
home city, occupation, languages, family, preferences, dislikes, hobbies, goals, habits, health
notes they chose to share.

Rules:
- "attribute" is a short snake_case key ("home_city", "favorite_drink", "hobby").
- "value" is short and specific ("Shenzhen", "jasmine tea"). One entry per value: two hobbies
  are two entries.
- Include an entry from <known_profile> only when the conversation changes it.
- {DATA_NOT_INSTRUCTIONS}
- When the conversation says nothing about the user, return an empty list.

Answer with JSON: {{"entries": [{{"attribute": "...", "value": "..."}}]}}"""


class ProfileEntryItem(BaseModel):
    attribute: str = Field(description="snake_case key, e.g. home_city")
    value: str


class ProfileResponse(BaseModel):
    entries: list[ProfileEntryItem]


def build(messages: Sequence[Message], known: Sequence[str] = ()) -> Prompt[ProfileResponse]:
    user = render_conversation(messages)
    if known:
        user = render_json_block("known_profile", list(known)) + "\n\n" + user
    return Prompt(SYSTEM, user, ProfileResponse, PROMPT_VERSION)
