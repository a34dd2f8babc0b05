"""``consolidate``: a consolidation run of one session; the job's result is the run's report.

Retries only on a concurrent change (``Conflict``) or a retryable backend error.
"""

from __future__ import annotations

from omoide.errors import Conflict
from omoide.jobs.kinds.base import Id, JobKind, Payload
from omoide.jobs.policy import RetryPolicy


class ConsolidatePayload(Payload):
    session_id: Id
    max_score: float | None = None


CONSOLIDATE = JobKind("consolidate", ConsolidatePayload, RetryPolicy(retryable_errors=(Conflict,)))
