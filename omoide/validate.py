"""Input checks shared by every interface, raising ``InvalidInput`` with a clear message."""

from __future__ import annotations

import math
import numbers
from typing import Any

from pydantic import ValidationError

from omoide.errors import InvalidInput
from omoide.types import Message


def check_text(text: Any, max_chars: int, what: str = "text") -> str:
    if not isinstance(text, str):
        raise InvalidInput(f"{what} must be a string, got {type(text).__name__}")
    if not text.strip():
        raise InvalidInput(f"{what} must not be empty")
    if len(text) > max_chars:
        raise InvalidInput(f"{what} is {len(text)} characters; the limit is {max_chars}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInput(f"{what} is not valid UTF-8: {exc.reason}") from exc
    if "\x00" in text:
        raise InvalidInput(f"{what} must not contain NUL characters")
    return text


def check_ids(user_id: str | None, scope_id: str | None) -> None:
    """Tenant ids hold no control character: the stores key a tenant's ranking statistics
    and vectors by ``user_id + "\\x1f" + scope_id``, which must name one tenant only."""
    for what, value in (("user_id", user_id), ("scope_id", scope_id)):
        if value is not None and any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in value):
            raise InvalidInput(f"{what} must not contain control characters", field=what)


def check_limit(limit: int, offset: int, maximum: int = 10_000) -> None:
    if not isinstance(limit, int) or not 1 <= limit <= maximum:
        raise InvalidInput(f"limit must be between 1 and {maximum}, got {limit!r}")
    if not isinstance(offset, int) or offset < 0:
        raise InvalidInput(f"offset must be 0 or more, got {offset!r}")


def check_threshold(threshold: float | None) -> None:
    """A search's minimum score is a finite number (or ``None``): a NaN compares false with
    every score and an infinity passes all or none, so either would silently empty or keep the
    whole result instead of meaning a score."""
    if threshold is None:
        return
    if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real):
        raise InvalidInput(
            f"threshold must be a number, got {type(threshold).__name__}", field="threshold"
        )
    if not math.isfinite(threshold):
        raise InvalidInput(
            f"threshold must be a finite number, not {float(threshold)!r}", field="threshold"
        )


def to_messages(value: Any, max_chars: int) -> list[Message]:
    """Accept a string, a list of ``Message`` or a list of ``{"role", "content"}`` dicts."""
    if isinstance(value, str):
        return [Message(role="user", content=check_text(value, max_chars))]
    if isinstance(value, bytes | bytearray):
        raise InvalidInput("text must be str, not bytes: decode it as UTF-8 first")
    if not isinstance(value, list) or not value:
        raise InvalidInput("messages must be a non-empty string or list of messages")
    out = []
    for index, item in enumerate(value):
        try:
            message = item if isinstance(item, Message) else Message.model_validate(item)
        except ValidationError as exc:
            raise InvalidInput(f"message {index} is invalid: {exc.errors()[0]['msg']}") from exc
        check_text(message.content, max_chars, what=f"message {index} content")
        out.append(message)
    return out


# Every stored integer is a SQLite INTEGER: a signed 64-bit number.
MIN_INT = -(2**63)
MAX_INT = 2**63 - 1
MAX_DEPTH = 64  # nesting of JSON objects and arrays in one request
Location = tuple[str | int, ...]


def string_problem(text: str) -> str | None:
    """Why ``text`` cannot be stored and read back, or ``None``.

    A lone surrogate (``"\\ud800"``, which JSON escapes can carry) is not Unicode: SQLite, JSON
    encoders and every reply that echoes it fail on it. NUL ends strings in C libraries.
    """
    if "\x00" in text:
        return "must not contain NUL characters (U+0000)"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        code = ord(text[exc.start])
        return f"contains a lone surrogate (U+{code:04X}); strings must be valid Unicode"
    return None


def _scalar_problem(value: Any) -> str | None:
    if isinstance(value, str):
        return string_problem(value)
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int) and not MIN_INT <= value <= MAX_INT:
        return f"integer out of range: must be between {MIN_INT} and {MAX_INT}"
    if isinstance(value, float) and not math.isfinite(value):
        return "must be a finite number, not NaN or Infinity"
    return None


def find_invalid(value: Any, max_depth: int = MAX_DEPTH) -> tuple[Location, str] | None:
    """The first string, key or number in a JSON value that cannot be stored, with its place.

    Iterative, so a deeply nested value cannot exhaust the stack; nesting deeper than
    ``MAX_DEPTH`` is itself a problem.
    """
    stack: list[tuple[Location, Any]] = [((), value)]
    while stack:
        where, item = stack.pop()
        if len(where) > max_depth:
            return where[:max_depth], f"nested more than {max_depth} levels deep"
        if isinstance(item, dict):
            for key, child in reversed(item.items()):
                problem = _scalar_problem(key)
                if problem is not None:
                    return (*where, ascii(key)), f"key {problem}"
                stack.append(((*where, key), child))
        elif isinstance(item, list | tuple):
            stack.extend(((*where, i), child) for i, child in reversed(list(enumerate(item))))
        else:
            problem = _scalar_problem(item)
            if problem is not None:
                return where, problem
    return None


def describe_location(prefix: str, where: Location) -> str:
    """``body.metadata.note``; without a prefix, relative: ``metadata.note``."""
    return ".".join([*([prefix] if prefix else []), *(str(part) for part in where)]) or "value"


def check_value(value: Any, what: str) -> None:
    """Raise ``InvalidInput`` naming the first unstorable string or number in ``value``."""
    found = find_invalid(value)
    if found is not None:
        where, problem = found
        raise InvalidInput(f"{describe_location(what, where)}: {problem}")
