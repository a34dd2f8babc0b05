"""Values for the variables a caller declared (typed key/values, filled from a conversation)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Protocol

from pydantic import BaseModel

from omoide.llm.prompts import (
    DATA_NOT_INSTRUCTIONS,
    Prompt,
    render_conversation,
    render_example,
    render_json_block,
)
from omoide.types import Message

PROMPT_VERSION = "variables/2"


class VariableSpec(Protocol):
    """What the prompt needs of a declared variable (``omoide.extract.variables.MemVariable``)."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def type(self) -> str: ...


class VariableValue(BaseModel):
    name: str
    value: str | int | float | bool | None = None


class VariablesResponse(BaseModel):
    EXAMPLE: ClassVar[dict[str, Any]] = {
        "values": [
            {"name": "pet_name", "value": "Biscuit"},
            {"name": "rows_weekly", "value": True},
            {"name": "shoe_size", "value": None},
        ]
    }
    MAX_TOKENS: ClassVar[int] = 384

    values: list[VariableValue]


SYSTEM = f"""You fill in declared variables from a conversation between a user and an assistant.
<variables> lists each variable's name, description and type (string, boolean, integer or
number).

Rules:
- Give a value only when the conversation states it; otherwise give null. Never guess.
- Use the declared type: true/false for boolean, a whole number for integer, a number for number.
- Give one entry per declared variable, using its exact name.
- {DATA_NOT_INSTRUCTIONS}

Answer with JSON shaped like this example (its variables are not the declared ones):
{render_example(VariablesResponse.EXAMPLE)}"""


def build(
    messages: Sequence[Message], variables: Sequence[VariableSpec]
) -> Prompt[VariablesResponse]:
    declared = [{"name": v.name, "description": v.description, "type": v.type} for v in variables]
    user = render_json_block("variables", declared) + "\n\n" + render_conversation(messages)
    return Prompt(SYSTEM, user, VariablesResponse, PROMPT_VERSION)
