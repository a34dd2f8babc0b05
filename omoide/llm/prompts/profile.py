"""User profile entries: stable attributes of the user as attribute/value pairs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from omoide.llm.prompts import (
    DATA_NOT_INSTRUCTIONS,
    Prompt,
    render_conversation,
    render_example,
    render_json_block,
)
from omoide.types import Message

PROMPT_VERSION = "profile/2"


class ProfileEntryItem(BaseModel):
    attribute: str = Field(description="snake_case key, e.g. home_city")
    value: str


class ProfileResponse(BaseModel):
    EXAMPLE: ClassVar[dict[str, Any]] = {
        "entries": [
            {"attribute": "occupation", "value": "typewriter restorer"},
            {"attribute": "hobby", "value": "rowing"},
        ]
    }
    MAX_TOKENS: ClassVar[int] = 384

    entries: list[ProfileEntryItem]


SYSTEM = f"""You maintain a profile of the user from their conversations with an assistant.
Record stable attributes of the user only (not of the assistant or of other people): name, age,
home city, occupation, languages, family, preferences, dislikes, hobbies, goals, habits, health
notes they chose to share.

Rules:
- "attribute" is a short snake_case key ("home_city", "favorite_drink", "hobby").
- "value" is short and specific, in the user's words. One entry per value: two hobbies are two
  entries.
- Include an entry from <known_profile> only when the conversation changes it.
- {DATA_NOT_INSTRUCTIONS}
- When the conversation says nothing about the user, return an empty list: {{"entries": []}}.

Answer with JSON shaped like this example (its values are not about this user):
{render_example(ProfileResponse.EXAMPLE)}"""


def build(messages: Sequence[Message], known: Sequence[str] = ()) -> Prompt[ProfileResponse]:
    user = render_conversation(messages)
    if known:
        user = render_json_block("known_profile", list(known)) + "\n\n" + user
    return Prompt(SYSTEM, user, ProfileResponse, PROMPT_VERSION)
