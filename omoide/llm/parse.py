"""Pure helpers that dig a JSON value out of what a chat model actually said.

Models wrap their JSON in prose ("Sure! Here is..."), markdown fences, ``<think>`` blocks and,
behind some servers, raw ChatML tokens. Rather than strip each wrapper by pattern, ``clean``
removes what can hide or imitate JSON (reasoning, special tokens) and ``_Decoded`` then
decodes every JSON value that starts at a ``{`` or ``[``, so fences and prose fall away.

Decoding is lenient where real replies are sloppy and the meaning is still unambiguous: literal
newlines and other control characters inside strings (``strict=False``) and trailing commas.
A value that is never closed is not guessed at, except by ``salvage_truncated`` for a reply the
server says it cut (``finish_reason="length"``), which drops the incomplete last element.

    >>> parse_model('<think>hm</think>```json\\n{"facts": ["likes tea",]}\\n```', Facts)
    Facts(facts=['likes tea'])
"""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass, field
from typing import Any, TypeVar, get_origin

from pydantic import BaseModel, ValidationError

T = TypeVar("T", bound=BaseModel)

_REASONING = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.S | re.I)
# Qwen3-style templates put the opening <think> in the prompt: only the closing tag is returned.
_REASONING_TAIL = re.compile(r"^.*</(?:think|thinking|reasoning)>", re.S | re.I)
_SPECIAL_TOKEN = re.compile(r"<\|im_start\|>(?:system|user|assistant)?|<\|[A-Za-z0-9_]{1,32}\|>")
# Bounds the work on a long reply full of braces that are not JSON.
_MAX_CANDIDATES = 64
_DECODER = json.JSONDecoder(strict=False)
_CLOSER = {"{": "}", "[": "]"}
_CUT_OFF = -2  # ``_decode_at``: the value runs to the end of the reply


class ParseError(ValueError):
    """The reply holds no JSON value that validates against the schema; the message says why."""


def strip_special_tokens(text: str) -> str:
    """Remove ChatML and similar ``<|...|>`` tokens, and the role name after ``<|im_start|>``."""
    return _SPECIAL_TOKEN.sub("", text)


def strip_reasoning(text: str) -> str:
    """Remove ``<think>...</think>`` blocks, and everything before a lone ``</think>``."""
    return _REASONING_TAIL.sub("", _REASONING.sub("", text))


def clean(text: str) -> str:
    return strip_reasoning(strip_special_tokens(text)).strip()


def parse_model(text: str, schema: type[T]) -> T:
    """The first JSON value in ``text`` that validates as ``schema``; ``ParseError`` if none.

    The error names what was wrong: no JSON at all (with the start of the reply), a syntax error
    (with its position and the text around it), a value never closed, or the schema mismatch.
    """
    cleaned = clean(text)
    decoded = _Decoded.of(cleaned)
    errors: list[ValidationError] = []
    for value in decoded.values:
        try:
            return schema.model_validate(_wrap_bare_list(_cleaned(value), schema))
        except ValidationError as exc:
            errors.append(exc)
    if errors:
        raise ParseError(f"the JSON does not match the schema: {describe(errors[0])}")
    if decoded.problem:
        raise ParseError(decoded.problem)
    start = cleaned[:80] + ("..." if len(cleaned) > 80 else "")
    raise ParseError(f"the reply contains no JSON object (it reads {start!r})")


def salvage_truncated(text: str, schema: type[T]) -> T | None:
    """What a reply cut off mid-JSON still says: the incomplete last element is dropped and the
    open brackets closed. None when nothing complete is left or it does not fit ``schema``.

        >>> salvage_truncated('{"facts": ["a", "b", "c unfini', Facts)
        Facts(facts=['a', 'b'])
    """
    cleaned = clean(text)
    start = _next_opening(cleaned, 0)
    if start < 0:
        return None
    scan = _scan(cleaned, start)
    if scan.complete or not scan.cuts:
        return None
    size, stack = scan.cuts[-1]
    closed = scan.text[:size] + "".join(_CLOSER[c] for c in reversed(stack))
    try:
        return schema.model_validate(_wrap_bare_list(_cleaned(_DECODER.decode(closed)), schema))
    except (json.JSONDecodeError, ValidationError):
        return None


def describe(exc: ValidationError, limit: int = 5) -> str:
    """A short, model-readable summary of a validation error (fed back in the repair request)."""
    parts = []
    for error in exc.errors()[:limit]:
        where = ".".join(str(part) for part in error["loc"]) or "(root)"
        parts.append(f"{where}: {error['msg']}")
    more = exc.error_count() - limit
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


@dataclass
class _Decoded:
    values: list[Any] = field(default_factory=list)
    problem: str | None = None  # why the first candidate did not decode, when none did

    @classmethod
    def of(cls, text: str) -> _Decoded:
        found = cls()
        pos = 0
        for _ in range(_MAX_CANDIDATES):
            start = _next_opening(text, pos)
            if start < 0:
                break
            value, end, problem = _decode_at(text, start)
            if end == _CUT_OFF:
                # Valid JSON up to the end of the reply: everything after ``start`` is a fragment
                # of it, and a fragment (an inner list) must not pass for the answer.
                found.problem = found.problem or problem
                break
            if end < 0:
                found.problem = found.problem or problem
                pos = start + 1
                continue
            found.values.append(value)
            pos = end
        return found


def _decode_at(text: str, start: int) -> tuple[Any, int, str | None]:
    """(value, end, None), or (None, -1, what is wrong) for the value opening at ``start``."""
    try:
        value, end = _DECODER.raw_decode(text, start)
        return value, end, None
    except json.JSONDecodeError as exc:
        first = exc
    scan = _scan(text, start)
    if not scan.complete:
        problem = (
            f"the JSON value opened at char {start} is never closed "
            f"(the reply ends inside it: ...{text[-40:]!r})"
        )
        return None, _CUT_OFF if _is_prefix(scan.text) else -1, problem
    try:
        # Trailing commas removed; anything else still wrong is reported where it is.
        return _DECODER.decode(scan.text), scan.end, None
    except json.JSONDecodeError:
        return None, -1, _syntax_problem(text, first)


def _is_prefix(text: str) -> bool:
    """True when ``text`` is valid JSON that merely stops early."""
    try:
        _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        return exc.pos >= len(text.rstrip())
    return True


def _syntax_problem(text: str, exc: json.JSONDecodeError) -> str:
    near = text[max(0, exc.pos - 30) : exc.pos + 30]
    return (
        f"invalid JSON at line {exc.lineno} column {exc.colno} (char {exc.pos}): "
        f"{exc.msg}, near {near!r}"
    )


@dataclass
class _Scan:
    text: str  # the value's text with trailing commas removed
    end: int  # index in the input just past the value (len(input) when never closed)
    complete: bool
    # (length of ``text``, open brackets) at each point where the value could be cut cleanly:
    # between the elements of an array or the members of the outermost object.
    cuts: list[tuple[int, tuple[str, ...]]] = field(default_factory=list)


def _scan(text: str, start: int) -> _Scan:
    out: list[str] = []
    stack: list[str] = []
    cuts: list[tuple[int, tuple[str, ...]]] = []
    in_string = escaped = False
    for i in range(start, len(text)):
        char = text[i]
        if in_string:
            escaped, in_string = (False, True) if escaped else (char == "\\", char != '"')
        elif char == '"':
            in_string = True
        elif char in "{[":
            stack.append(char)
        elif char in "}]":
            _drop_trailing_comma(out)
            if not stack or _CLOSER[stack.pop()] != char:
                return _Scan("".join(out), i, complete=True)  # mismatched: let json report it
            if not stack:
                out.append(char)
                return _Scan("".join(out), i + 1, complete=True, cuts=cuts)
            if stack[-1] == "[" or len(stack) == 1:
                cuts.append((len(out) + 1, tuple(stack)))
        elif char == "," and (stack[-1] == "[" or len(stack) == 1):
            cuts.append((len(out), tuple(stack)))
        out.append(char)
    return _Scan("".join(out), len(text), complete=False, cuts=cuts)


def _drop_trailing_comma(out: list[str]) -> None:
    i = len(out) - 1
    while i >= 0 and out[i].isspace():
        i -= 1
    if i >= 0 and out[i] == ",":
        del out[i]


def _next_opening(text: str, pos: int) -> int:
    starts = [i for i in (text.find("{", pos), text.find("[", pos)) if i >= 0]
    return min(starts, default=-1)


def _storable(value: Any) -> Any:
    """``value`` without what no store keeps: NUL (PostgreSQL refuses it, so the job failed
    there; SQLite kept it, and then the export of the tenant was refused by the import) and
    lone surrogates (a JSON escape of half an emoji: no UTF-8 encodes it)."""
    if isinstance(value, str):
        return value.replace("\x00", "").encode("utf-8", "ignore").decode("utf-8")
    if isinstance(value, list):
        return [_storable(v) for v in value]
    if isinstance(value, dict):
        return {_storable(k): _storable(v) for k, v in value.items()}
    return value


def _cleaned(value: Any) -> Any:
    """``_storable(value)``; a value nested past Python's recursion limit as it is (nested
    past any schema: validation refuses it)."""
    with contextlib.suppress(RecursionError):
        return _storable(value)
    return value


def _wrap_bare_list(value: Any, schema: type[BaseModel]) -> Any:
    # Small models often answer {"facts": [...]} with just [...]; when the schema has a single
    # list field the meaning is unambiguous, and accepting it saves a repair round trip.
    if not isinstance(value, list) or len(schema.model_fields) != 1:
        return value
    name, field_info = next(iter(schema.model_fields.items()))
    if get_origin(field_info.annotation) is not list:
        return value
    return {field_info.alias or name: value}
