"""Pure helpers that dig a JSON value out of what a chat model actually said.

Models wrap their JSON in prose ("Sure! Here is..."), markdown fences, ``<think>`` blocks and,
behind some servers, raw ChatML tokens. Rather than strip each wrapper by pattern, ``clean``
removes what can hide or imitate JSON (reasoning, special tokens) and ``iter_json_values`` then
decodes every JSON value that starts at a ``{`` or ``[``, so fences and prose fall away.

    >>> parse_model('<think>hm</think>```json\\n{"facts": ["likes tea"]}\\n```', Facts)
    Facts(facts=['likes tea'])
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, TypeVar, get_origin

from pydantic import BaseModel, ValidationError

T = TypeVar("T", bound=BaseModel)

_REASONING = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.S | re.I)
# Qwen3-style templates put the opening <think> in the prompt: only the closing tag is returned.
_REASONING_TAIL = re.compile(r"^.*</(?:think|thinking|reasoning)>", re.S | re.I)
_SPECIAL_TOKEN = re.compile(r"<\|im_start\|>(?:system|user|assistant)?|<\|[A-Za-z0-9_]{1,32}\|>")
# Bounds the work on a long reply full of braces that are not JSON.
_MAX_CANDIDATES = 64


class ParseError(ValueError):
    """The reply holds no JSON value that validates against the schema."""


def strip_special_tokens(text: str) -> str:
    """Remove ChatML and similar ``<|...|>`` tokens, and the role name after ``<|im_start|>``."""
    return _SPECIAL_TOKEN.sub("", text)


def strip_reasoning(text: str) -> str:
    """Remove ``<think>...</think>`` blocks, and everything before a lone ``</think>``."""
    return _REASONING_TAIL.sub("", _REASONING.sub("", text))


def clean(text: str) -> str:
    return strip_reasoning(strip_special_tokens(text)).strip()


def iter_json_values(text: str) -> Iterator[Any]:
    """Yield each JSON object or array found in ``text``, left to right, never overlapping."""
    decoder = json.JSONDecoder()
    pos = 0
    for _ in range(_MAX_CANDIDATES):
        start = _next_opening(text, pos)
        if start < 0:
            return
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            pos = start + 1
            continue
        yield value
        pos = end


def parse_model(text: str, schema: type[T]) -> T:
    """The first JSON value in ``text`` that validates as ``schema``; ``ParseError`` if none."""
    errors: list[ValidationError] = []
    for value in iter_json_values(clean(text)):
        try:
            return schema.model_validate(_wrap_bare_list(value, schema))
        except ValidationError as exc:
            errors.append(exc)
    if not errors:
        raise ParseError("the reply contains no JSON object")
    raise ParseError(f"the JSON does not match the schema: {describe(errors[0])}")


def describe(exc: ValidationError, limit: int = 5) -> str:
    """A short, model-readable summary of a validation error (fed back in the repair request)."""
    parts = []
    for error in exc.errors()[:limit]:
        where = ".".join(str(part) for part in error["loc"]) or "(root)"
        parts.append(f"{where}: {error['msg']}")
    more = exc.error_count() - limit
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def _next_opening(text: str, pos: int) -> int:
    starts = [i for i in (text.find("{", pos), text.find("[", pos)) if i >= 0]
    return min(starts, default=-1)


def _wrap_bare_list(value: Any, schema: type[BaseModel]) -> Any:
    # Small models often answer {"facts": [...]} with just [...]; when the schema has a single
    # list field the meaning is unambiguous, and accepting it saves a repair round trip.
    if not isinstance(value, list) or len(schema.model_fields) != 1:
        return value
    name, field = next(iter(schema.model_fields.items()))
    if get_origin(field.annotation) is not list:
        return value
    return {field.alias or name: value}
