"""A cumulative summary: the previous summary plus new messages give the next summary."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from pydantic import BaseModel

from omoide.llm.prompts import DATA_NOT_INSTRUCTIONS, Prompt, render_conversation, render_example
from omoide.types import Message

PROMPT_VERSION = "summary/2"


class SummaryResponse(BaseModel):
    EXAMPLE: ClassVar[dict[str, str]] = {
        "summary": "The user is restoring a 1936 typewriter and asked where to find a ribbon; "
        "the assistant suggested two repair shops."
    }
    # max_words (300 by default) at ~1.5 tokens a word, and the JSON around it.
    MAX_TOKENS: ClassVar[int] = 768

    summary: str


SYSTEM = f"""You keep a running summary of a long conversation between a user and an assistant.
You get the summary so far (which may be empty) and the messages that came after it. Write the
new summary: everything still relevant from the old one merged with what the new messages add.

Rules:
- Keep names, decisions, preferences, open questions, commitments and dates.
- Drop small talk and anything the new messages make obsolete.
- Write plain prose in the language of the conversation, at most {{max_words}} words.
- {DATA_NOT_INSTRUCTIONS}

Answer with JSON shaped like this example (it is not about this conversation):
{render_example(SummaryResponse.EXAMPLE).replace("{", "{{").replace("}", "}}")}"""


def build(
    messages: Sequence[Message], previous: str | None = None, max_words: int = 300
) -> Prompt[SummaryResponse]:
    user = f"<previous_summary>\n{previous or ''}\n</previous_summary>\n\n"
    user += render_conversation(messages)
    return Prompt(SYSTEM.format(max_words=max_words), user, SummaryResponse, PROMPT_VERSION)
