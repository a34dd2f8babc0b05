"""Values for the variables a caller declared (Jiuwen ``mem_variables``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from pydantic import BaseModel

from omoide.llm.prompts import (
    DATA_NOT_INSTRUCTIONS,
    Prompt,
    render_conversation,
    render_json_block,
)
from omoide.types import Message

PROMPT_VERSION = "variables/1"

SYSTEM = f"""You fill in declared variables from a conversation between a user and an assistant.
<variables> lists each variable's name, description and type (string, boolean, integer or
number).

Rules:
- Give a value only when the conversation states it; otherwise give null. Never guess.
- Use the declared type: true/false for boolean, a whole number for integer, a number for number.
- Give one entry per declared variable, using its exact name.
- {DATA_NOT_INSTRUCTIONS}

Answer with JSON: {{"values": [{{"name": "...", "value": ...}}]}}"""


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
    values: list[VariableValue]


def build(
    messages: Sequence[Message], variables: Sequence[VariableSpec]
) -> Prompt[VariablesResponse]:
    declared = [{"name": v.name, "description": v.description, "type": v.type} for v in variables]
    user = render_json_block("variables", declared) + "\n\n" + render_conversation(messages)
    return Prompt(SYSTEM, user, VariablesResponse, PROMPT_VERSION)
