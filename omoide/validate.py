"""Input checks shared by every interface, raising ``InvalidInput`` with a clear message."""

from __future__ import annotations

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


def check_limit(limit: int, offset: int, maximum: int = 10_000) -> None:
    if not isinstance(limit, int) or not 1 <= limit <= maximum:
        raise InvalidInput(f"limit must be between 1 and {maximum}, got {limit!r}")
    if not isinstance(offset, int) or offset < 0:
        raise InvalidInput(f"offset must be 0 or more, got {offset!r}")


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
