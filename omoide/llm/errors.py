"""What can go wrong with an LLM call, as ``LLMError`` subclasses the job layer can tell apart.

    LLMError (omoide.errors)
    ├── LLMUnavailable   the endpoint is down, overloaded or timed out: wait and try again
    │                    (``retryable=True``; ``reason``: unreachable, timeout, rate_limited,
    │                    overloaded, server_error, malformed_response)
    ├── LLMRejected      the endpoint refused the request itself (4xx, a forced response format
    │                    it does not take, a bad model name): fix the configuration
    └── LLMTruncated     the answer hit its ``max_tokens`` budget (``finish_reason="length"``)

An answer that cannot be used (no valid JSON even after a repair request, or JSON that makes no
sense, like an unknown id) stays a plain ``LLMError`` with ``retryable=False`` and
``fields["kind"] == "bad_answer"``: its class name is what job errors have always shown.
``kind_of`` names the four cases for any ``LLMError``; ``fields["usage"]`` holds a ``Usage``
when requests were made. Only "unavailable" is an outage: an outage says nothing about the job,
so it should not use up the attempts meant for bad answers.
"""

from __future__ import annotations

from typing import ClassVar

from omoide.errors import LLMError


class LLMUnavailable(LLMError):
    """Connection refused, timeout, HTTP 429/5xx, or a body that is not an API response."""

    kind: ClassVar[str] = "unavailable"

    def __init__(self, message: str, *, reason: str, **fields: object) -> None:
        super().__init__(message, retryable=True, reason=reason, **fields)
        self.reason = reason


class LLMRejected(LLMError):
    """The endpoint answered 4xx to the request as such; retrying the same request cannot help."""

    kind: ClassVar[str] = "rejected"

    def __init__(self, message: str, **fields: object) -> None:
        super().__init__(message, retryable=False, **fields)


class LLMTruncated(LLMError):
    """The model used its whole output budget; ``fields``: ``max_tokens``, ``raw``, and
    ``partial``, what the cut reply still says (its incomplete last element dropped) or None."""

    kind: ClassVar[str] = "truncated"

    def __init__(self, message: str, **fields: object) -> None:
        super().__init__(message, retryable=False, **fields)


BAD_ANSWER = "bad_answer"


def bad_answer(message: str, **fields: object) -> LLMError:
    """The model answered, but not with something usable (``fields``: ``raw``, ...)."""
    return LLMError(message, retryable=False, kind=BAD_ANSWER, **fields)


def kind_of(exc: LLMError) -> str:
    """The kind of any ``LLMError``: unavailable, rejected, truncated or bad_answer.

    An ``LLMError`` raised elsewhere (another ``LLM`` implementation) is an outage when it is
    retryable and a bad answer otherwise, which is what ``retryable`` always meant.
    """
    kind = getattr(type(exc), "kind", None) or exc.fields.get("kind")
    if isinstance(kind, str):
        return kind
    return LLMUnavailable.kind if exc.retryable else BAD_ANSWER
