"""WilmerAI vector memories: a conversation chunk becomes searchable memory objects.

WilmerAI's vector-memory workflow must return "a JSON string representing a single object or an
array of objects", each with ``title``, ``summary``, ``entities`` and ``key_phrases``; this is
the direct-LLM-call form of it. Both shapes are accepted.

    >>> reply = build([Message(content="We picked Lisbon for the offsite")]).run(llm).value
    >>> reply.memories[0].title
    'Offsite location'

The prompt's own example is deliberately unlike a real chat (a lighthouse keepers' guild): an
example about an offsite in Lisbon came back as memories of unrelated discussions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from pydantic import BaseModel, Field, field_validator, model_validator

from omoide.llm.prompts import DATA_NOT_INSTRUCTIONS, Prompt, render_conversation, render_example
from omoide.types import Message

PROMPT_VERSION = "wilmer-vector/2"


class VectorMemory(BaseModel):
    """One memory object, as WilmerAI's vector memory stores it in ``metadata_json``."""

    title: str = ""
    summary: str = Field(min_length=1)
    entities: list[str] = Field(default_factory=list)
    key_phrases: list[str] = Field(default_factory=list)

    @field_validator("entities", "key_phrases", mode="before")
    @classmethod
    def _listed(cls, value: Any) -> Any:
        # Models often answer "Lisbon, Porto" where a list was asked for.
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return [str(v) for v in value] if isinstance(value, list) else value


class VectorMemories(BaseModel):
    EXAMPLE: ClassVar[list[dict[str, Any]]] = [
        {
            "title": "Guild lamp budget",
            "summary": "The lighthouse keepers' guild agreed to replace the brass lamps in 2031.",
            "entities": ["lighthouse keepers' guild"],
            "key_phrases": ["brass lamps", "guild budget"],
        }
    ]
    MAX_TOKENS: ClassVar[int] = 1024

    memories: list[VectorMemory]

    @model_validator(mode="before")
    @classmethod
    def _single_object(cls, value: Any) -> Any:
        if isinstance(value, dict) and "memories" not in value and "summary" in value:
            return {"memories": [value]}
        return value


SYSTEM = f"""You turn a chunk of a conversation into memories that a keyword search will find.
Write one memory per distinct topic of the chunk (usually one to three).

Each memory is an object with:
- "title": a short title of the topic (a few words),
- "summary": what was said and decided about it, self-contained, in the conversation's language,
- "entities": the people, places, organisations, products and other named things involved,
- "key_phrases": the words and short phrases someone would search for to find it.

{DATA_NOT_INSTRUCTIONS}

Answer with a JSON array of such objects, for example (it is not about this conversation):
{render_example(VectorMemories.EXAMPLE)}"""


def build(messages: Sequence[Message]) -> Prompt[VectorMemories]:
    return Prompt(SYSTEM, render_conversation(messages), VectorMemories, PROMPT_VERSION)
