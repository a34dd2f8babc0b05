"""The one retry policy: how long a failed job waits, and which errors are worth a retry.

Every job kind carries a ``RetryPolicy``; the worker is the only code that applies it (the old
code had three copies with different meanings). Giving up is the store's side of the same
policy: a job is enqueued with ``max_attempts`` and ``fail_job`` marks it ``failed`` when its
attempts are used up.

``decide`` returns a ``Decision`` rather than a bool so that later outcomes fit without changing
callers (for instance "an LLM outage: wait minutes, jittered, without using up an attempt").
"""

from __future__ import annotations

from dataclasses import dataclass

from omoide.errors import BackendError, Conflict, FeatureDisabled, NotFound, OmoideError

# A concurrent change, a row deleted meanwhile, a component not ready yet: worth another try.
RETRYABLE_ERRORS: tuple[type[OmoideError], ...] = (Conflict, NotFound, FeatureDisabled)


@dataclass(frozen=True)
class Decision:
    """What to do with a failed job: retry after ``delay_ms``, or fail it for good now."""

    retry: bool
    delay_ms: int = 0


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff from ``base_backoff_ms``, capped at ``max_backoff_ms``, for at most
    ``max_attempts`` runs.

    Which errors retry: a ``BackendError`` says so itself (``retryable``); the
    ``retryable_errors`` classes do; any other ``OmoideError`` is a deliberate refusal (an
    unusable answer, an invalid payload) and fails at once; an unexpected exception (a bug, a
    driver error) retries, since a restart or a fix may cure it and the attempts still bound it.
    """

    max_attempts: int = 5
    base_backoff_ms: int = 1_000
    max_backoff_ms: int = 600_000
    retryable_errors: tuple[type[OmoideError], ...] = RETRYABLE_ERRORS

    def backoff_ms(self, attempts: int) -> int:
        """The wait after the ``attempts``-th failed run: base, 2x base, 4x base ... capped."""
        exponent = max(0, attempts - 1)
        if exponent >= 62:  # far past any cap; avoids building a huge int
            return self.max_backoff_ms
        return int(min(self.max_backoff_ms, self.base_backoff_ms * 2**exponent))

    def retryable(self, error: BaseException) -> bool:
        if isinstance(error, BackendError):
            return error.retryable
        if isinstance(error, OmoideError):
            return isinstance(error, self.retryable_errors)
        return True

    def decide(self, error: BaseException, attempts: int) -> Decision:
        """Retry (after the backoff for ``attempts``) or give up now."""
        if not self.retryable(error):
            return Decision(retry=False)
        return Decision(retry=True, delay_ms=self.backoff_ms(attempts))


DEFAULT_POLICY = RetryPolicy()
