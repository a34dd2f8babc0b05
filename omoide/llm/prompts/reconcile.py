"""Reconcile candidate facts with similar stored memories: ADD, UPDATE, DELETE or NOOP."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field, field_validator

from omoide.llm.prompts import (
    DATA_NOT_INSTRUCTIONS,
    Prompt,
    render_example,
    render_json_block,
)

PROMPT_VERSION = "reconcile/2"


class MemoryOperation(BaseModel):
    op: Literal["ADD", "UPDATE", "DELETE", "NOOP"]
    id: str | None = Field(None, description="The id of the stored memory; null for ADD.")
    text: str = Field("", description="The fact, or the rewritten memory for UPDATE.")

    @field_validator("id", mode="before")
    @classmethod
    def _id_as_text(cls, value: object) -> object:
        # Models often copy the id "3" as the number 3, or write "" for "no id".
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        return value or None


class ReconcileResponse(BaseModel):
    EXAMPLE: ClassVar[dict[str, Any]] = {
        "operations": [
            {"op": "ADD", "id": None, "text": "The user restores antique typewriters"},
            {"op": "UPDATE", "id": "0", "text": "The user rows twice a week, not once"},
        ]
    }
    MAX_TOKENS: ClassVar[int] = 768

    operations: list[MemoryOperation]


SYSTEM = f"""You keep a user's long-term memory consistent. You get the stored memories that
look related, each with an id, and new facts from a recent conversation. For every new fact,
choose one operation:

- ADD: the fact is new. "text" is the fact; "id" is null.
- UPDATE: the fact changes or refines a stored memory about the same thing (a new city, a more
  precise date). "id" is that memory's id; "text" is the memory rewritten to be true now.
- DELETE: the fact says a stored memory is no longer true and nothing replaces it ("I sold my
  car"). "id" is that memory's id; "text" is the fact.
- NOOP: the memory already says this. "id" is that memory's id; "text" is the fact.

Use only ids from <existing_memories>; never invent one. Give at most one UPDATE or DELETE per
id. {DATA_NOT_INSTRUCTIONS}

Answer with JSON shaped like this example (its texts are not this user's facts):
{render_example(ReconcileResponse.EXAMPLE)}"""


def build(facts: Sequence[str], existing: Sequence[tuple[str, str]]) -> Prompt[ReconcileResponse]:
    """``existing`` is ``(id, text)`` pairs; short ids ("0", "1") are easier for a model to copy."""
    memories = [{"id": memory_id, "text": text} for memory_id, text in existing]
    user = render_json_block("existing_memories", memories) + "\n\n"
    user += render_json_block("new_facts", list(facts))
    return Prompt(SYSTEM, user, ReconcileResponse, PROMPT_VERSION)
