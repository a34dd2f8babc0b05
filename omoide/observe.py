"""``Observer``: what the engine's parts report about each call they make, for metrics.

The embedder wrapper, the LLM client and the job worker each take an observer in their
constructor (``omoide.wiring`` passes one down); the default ``NO_OBSERVER`` does nothing. The
API layer supplies a Prometheus implementation (``omoide.api.metrics.CallMetrics``), so no
part of the engine knows about Prometheus and no global is involved.

Errors are reported by class name (``LLMUnavailable``, ``EmbedderError``): a small, bounded
set, fit for a metric label. Implementations must be thread-safe and must not raise (they are
called from worker threads in the middle of a job).
"""

from __future__ import annotations

from typing import Literal, Protocol

# What became of one job after a run: finished, rescheduled using an attempt, rescheduled
# without using one (an LLM outage), failed for good.
JobOutcome = Literal["done", "retried", "deferred", "failed"]


class Observer(Protocol):
    def embed_call(self, seconds: float, error: str | None) -> None:
        """One embedder call; ``error`` is the exception's class name when it failed."""

    def llm_call(self, seconds: float, error: str | None) -> None:
        """One HTTP request to the LLM endpoint (a format fallback or a repair is another)."""

    def job_batch(self, kind: str, seconds: float) -> None:
        """One batch of jobs of ``kind`` run by its handler."""

    def job_outcome(self, kind: str, outcome: JobOutcome) -> None:
        """What became of one job after its run."""


class NullObserver:
    """Observes nothing: the default."""

    def embed_call(self, seconds: float, error: str | None) -> None:  # noqa: ARG002
        return None

    def llm_call(self, seconds: float, error: str | None) -> None:  # noqa: ARG002
        return None

    def job_batch(self, kind: str, seconds: float) -> None:  # noqa: ARG002
        return None

    def job_outcome(self, kind: str, outcome: JobOutcome) -> None:  # noqa: ARG002
        return None


NO_OBSERVER: Observer = NullObserver()
