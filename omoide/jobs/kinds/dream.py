"""``dream_sweep``: one scheduled "dreaming" sweep over a tenant's sessions.

The scheduler enqueues it when it claims the tenant's due schedule; the job's tenant is the
schedule's, and its payload the schedule's settings at that moment. Its result is the sweep's
report: what ran, on which sessions, or why nothing could (no LLM, no eligible session).
"""

from __future__ import annotations

from pydantic import Field

from omoide.errors import Conflict
from omoide.jobs.kinds.base import JobKind, Payload
from omoide.jobs.policy import RetryPolicy


class DreamSweepPayload(Payload):
    scheduled_ms: int
    min_session_rounds: int = Field(4, ge=1)
    max_sessions_per_sweep: int = Field(10, ge=1)
    max_compress_tokens: int = Field(30_000, gt=0)
    max_items_per_session: int = Field(5, ge=1)


DREAM_SWEEP = JobKind("dream_sweep", DreamSweepPayload, RetryPolicy(retryable_errors=(Conflict,)))
