"""``expiry_refresh`` and ``expiry_delete``: the maintenance of memories no longer in use.

A memory is expired when it was last used (accessed or changed) before ``before_ms``. The
refresh job counts them (its result is the count); the delete job deletes them tenant by
tenant, recording one step per user (so a rerun after a crash skips the users done, and
``task_status`` reads its progress from the steps). ``dry_run`` counts without deleting.
Neither is worth retrying on anything but a concurrent change or a retryable backend error.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from omoide.errors import Conflict
from omoide.jobs.kinds.base import Id, JobKind, Payload
from omoide.jobs.policy import RetryPolicy


class Tenant(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    user_id: Id
    scope_id: Id


class ExpiryRefreshPayload(Payload):
    before_ms: int
    days: int = 30
    # the tenants counted: every one (None) or those of one user / scope (a bound key's)
    user_id: str | None = None
    scope_id: str | None = None


class ExpiryDeletePayload(Payload):
    before_ms: int
    tenants: list[Tenant] = Field(default_factory=list)
    dry_run: bool = False


EXPIRY_REFRESH = JobKind(
    "expiry_refresh", ExpiryRefreshPayload, RetryPolicy(retryable_errors=(Conflict,))
)
EXPIRY_DELETE = JobKind(
    "expiry_delete", ExpiryDeletePayload, RetryPolicy(retryable_errors=(Conflict,))
)
