"""The one retry policy: how long a failed job waits, and which errors are worth a retry.

Every job kind carries a ``RetryPolicy``; the worker is the only code that applies it (the old
code had three copies with different meanings). Giving up is the store's side of the same
policy: a job is enqueued with ``max_attempts`` and ``fail_job`` marks it ``failed`` when its
attempts are used up.

``decide`` returns a ``Decision``: retry after a delay, give up now, or, for an LLM outage
(``LLMUnavailable`` because nothing listens, the call timed out, or the server said 429/503),
wait minutes, jittered, WITHOUT using up an attempt: an outage says nothing about the job, and
an LLM restart or a model load can take longer than all the attempts' backoffs together. The
outage backoff grows with the job's runs so far and is capped (``max_outage_ms``), so a job
waiting out an outage resumes by itself at most that long after the LLM answers again. An HTTP
500 or a garbled body (``server_error``, ``malformed_response``) may be caused by the request
itself, so it uses up attempts like any retryable error.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from omoide.errors import BackendError, Conflict, FeatureDisabled, NotFound, OmoideError
from omoide.llm.errors import LLMUnavailable

# A concurrent change, a row deleted meanwhile, a component not ready yet: worth another try.
RETRYABLE_ERRORS: tuple[type[OmoideError], ...] = (Conflict, NotFound, FeatureDisabled)

# The LLMUnavailable reasons that are an outage of the endpoint rather than a fault of the job.
OUTAGE_REASONS = frozenset({"unreachable", "timeout", "rate_limited", "overloaded"})


@dataclass(frozen=True)
class Decision:
    """What to do with a failed job: retry after ``delay_ms``, or fail it for good now.
    ``uses_attempt=False``: the run does not count against ``max_attempts`` (an outage)."""

    retry: bool
    delay_ms: int = 0
    uses_attempt: bool = True


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
    base_outage_ms: int = 5_000
    max_outage_ms: int = 300_000

    def backoff_ms(self, attempts: int) -> int:
        """The wait after the ``attempts``-th failed run: base, 2x base, 4x base ... capped."""
        exponent = max(0, attempts - 1)
        if exponent >= 62:  # far past any cap; avoids building a huge int
            return self.max_backoff_ms
        return int(min(self.max_backoff_ms, self.base_backoff_ms * 2**exponent))

    def outage_backoff_ms(self, runs: int) -> int:
        """The wait after the ``runs``-th run met an outage: doubling from ``base_outage_ms``,
        capped at ``max_outage_ms``, then jittered down by up to half so that the jobs an
        outage stopped together do not all hit the LLM again in the same second."""
        exponent = min(max(0, runs - 1), 32)
        ceiling = min(self.max_outage_ms, self.base_outage_ms * 2**exponent)
        return int(ceiling * random.uniform(0.5, 1.0))

    @staticmethod
    def is_outage(error: BaseException) -> bool:
        return isinstance(error, LLMUnavailable) and error.reason in OUTAGE_REASONS

    def retryable(self, error: BaseException) -> bool:
        if isinstance(error, BackendError):
            return error.retryable
        if isinstance(error, OmoideError):
            return isinstance(error, self.retryable_errors)
        return True

    def decide(self, error: BaseException, attempts: int) -> Decision:
        """Retry (after the backoff for ``attempts``), wait out an outage, or give up now."""
        if self.is_outage(error):
            return Decision(True, self.outage_backoff_ms(attempts), uses_attempt=False)
        if not self.retryable(error):
            return Decision(retry=False)
        return Decision(retry=True, delay_ms=self.backoff_ms(attempts))


DEFAULT_POLICY = RetryPolicy()
