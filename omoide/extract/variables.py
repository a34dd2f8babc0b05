"""Declared variables: flat, typed key/values a caller names, filled from conversations.

Types are the four JSON scalars. ``coerce`` is the one place values get their type, both for
what a model extracts and for a declared ``default``:

    >>> coerce("yes", "boolean"), coerce("42", "integer"), coerce("3.5", "number")
    (True, 42, 3.5)
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from omoide.errors import InvalidInput
from omoide.extract._common import (
    Drops,
    copies_example,
    folded_set,
    has_content,
    is_placeholder,
    unusable,
)
from omoide.llm.prompts import variables as variables_prompt
from omoide.llm.protocol import LLM
from omoide.types import Message

VariableType: TypeAlias = Literal["string", "boolean", "integer", "number"]
VariableValue: TypeAlias = str | bool | int | float

_TRUE = frozenset({"true", "yes", "y", "on", "1", "t"})
_FALSE = frozenset({"false", "no", "n", "off", "0", "f"})
_INTEGER = re.compile(r"[+-]?\d{1,30}")
# What models write instead of null when the conversation does not say.
_NOT_STATED = frozenset({"", "null", "none", "n/a", "unknown"})
_EXAMPLES = folded_set(
    str(v["value"])
    for v in variables_prompt.VariablesResponse.EXAMPLE["values"]
    if isinstance(v["value"], str)
)


class MemVariable(BaseModel):
    """A variable to extract: only ``name`` and ``description`` are needed.

        >>> MemVariable(name="city", description="Where the user lives", required=False)

    Unknown fields are rejected (a typo like ``descripton`` must not pass silently), and so are
    ``array`` / ``object`` types: variables are flat key/values. ``default`` is coerced to
    ``type`` when declared, so a bad default fails here, not at extraction time.
    """

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    description: str
    type: VariableType = "string"
    required: bool = True
    default: Any = None

    @field_validator("name")
    @classmethod
    def _strip_name(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("name must not be blank")
        return value.strip()

    @field_validator("type", mode="before")
    @classmethod
    def _simple_types_only(cls, value: object) -> object:
        if not isinstance(value, str):
            return value
        value = value.strip().lower()
        if value in ("array", "object"):
            raise ValueError(
                f"type {value!r} is not supported: variables are flat key/values, "
                "use string, boolean, integer or number"
            )
        return value

    @model_validator(mode="after")
    def _coerce_default(self) -> MemVariable:
        if self.default is not None:
            self.default = coerce(self.default, self.type)
        return self


def coerce(value: Any, type_: str) -> VariableValue:
    """``value`` as ``type_``, or ``InvalidInput`` when it cannot be that without guessing.

    string: any scalar (booleans as "true"/"false"); boolean: true/false, yes/no, on/off, 1/0;
    integer: whole numbers, also "42" and 42.0 (not 42.5, not booleans); number: any finite
    number, as a float. ``None``, lists and dicts are never a value.
    """
    convert = _CONVERTERS.get(type_)
    if convert is None:
        raise InvalidInput(f"unknown variable type {type_!r}: use one of {sorted(_CONVERTERS)}")
    if value is None or isinstance(value, list | dict | tuple | set):
        raise InvalidInput(f"{value!r} is not a {type_}")
    return convert(value)


def extract_variables(
    llm: LLM,
    messages: Sequence[Message],
    variables: Sequence[MemVariable],
    current: Mapping[str, Any] | None = None,
    *,
    drops: Drops | None = None,
) -> dict[str, VariableValue]:
    """The values ``messages`` state for ``variables``, coerced to their declared types.

    A variable the conversation does not state gets its ``default`` only when it has none yet
    (it is not in ``current``, the tenant's stored values); otherwise it is absent from the result,
    so writing the result never overwrites a known value with a default. ``required`` is advisory:
    a required variable that is neither stated nor defaulted is absent, not an error, since most
    conversations mention few variables. Names the model invents are ignored; a placeholder
    (``"..."``, ``"<value>"``) or the prompt's example value counts as not stated (and in
    ``drops``); a stated value that cannot be coerced raises ``LLMError(retryable=False)``
    with the raw answer.

        >>> extract_variables(llm, [Message(content="I'm 41")], [MemVariable(
        ...     name="age", description="The user's age", type="integer")])
        {'age': 41}
    """
    names = [v.name for v in variables]
    if len(set(names)) != len(names):
        raise InvalidInput("mem_variables: duplicate variable names")
    drops = drops if drops is not None else Drops()
    found = _stated_values(llm, messages, variables, drops) if variables else {}
    known = current or {}
    for var in variables:
        if var.name not in found and var.name not in known and var.default is not None:
            found[var.name] = var.default
    return found


def _stated_values(
    llm: LLM, messages: Sequence[Message], variables: Sequence[MemVariable], drops: Drops
) -> dict[str, VariableValue]:
    if not has_content(messages):
        return {}
    done = variables_prompt.build(messages, variables).run(llm)
    declared = {v.name.casefold(): v for v in variables}
    found: dict[str, VariableValue] = {}
    for item in done.value.values:
        var = declared.get(item.name.strip().casefold())
        if var is None or _not_stated(item.value):
            continue
        if isinstance(item.value, str):
            reason = _rejection(item.value, messages)
            if reason is not None:
                drops.add(reason, f"{var.name}={item.value}", "variable value")
                continue
        try:
            found[var.name] = coerce(item.value, var.type)
        except InvalidInput as exc:
            raise unusable(f"variable {var.name!r}: {exc.message}", done) from exc
    return found


def _rejection(value: str, messages: Sequence[Message]) -> str | None:
    if is_placeholder(value):
        return "placeholder"
    if copies_example(value, _EXAMPLES, messages):
        return "example"
    return None


def _not_stated(value: object) -> bool:
    return value is None or (isinstance(value, str) and value.strip().lower() in _NOT_STATED)


def _to_string(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and math.isfinite(value):
        return str(value)
    raise InvalidInput(f"{value!r} is not a string")


def _to_boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _TRUE or word in _FALSE:
            return word in _TRUE
    raise InvalidInput(f"{value!r} is not a boolean")


def _to_integer(value: Any) -> int:
    if isinstance(value, bool):
        raise InvalidInput(f"{value!r} is not an integer")
    if isinstance(value, int):
        return value
    if isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
        return int(value.strip())
    try:
        number = _to_number(value)
    except InvalidInput:
        number = math.nan
    if math.isfinite(number) and number.is_integer():
        return int(number)
    raise InvalidInput(f"{value!r} is not an integer")


def _to_number(value: Any) -> float:
    number = math.nan
    if isinstance(value, int | float) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str):
        with contextlib.suppress(ValueError):
            number = float(value.strip())
    if not math.isfinite(number):
        raise InvalidInput(f"{value!r} is not a number")
    return number


_CONVERTERS: dict[str, Callable[[Any], VariableValue]] = {
    "string": _to_string,
    "boolean": _to_boolean,
    "integer": _to_integer,
    "number": _to_number,
}
