"""Enqueueing typed jobs inside the transaction that stores what they work on.

Always enqueue in the transaction of the data the job needs (``with store.transaction() as
tx: ... enqueue(tx.jobs, ...)``): both commit or neither does, so no job points at missing
data and no data waits for a job that was never written.
"""

from __future__ import annotations

from omoide.jobs.kinds.base import JobKind, P
from omoide.store.ports.jobs import JobWrites
from omoide.types import Scope


def enqueue(jobs: JobWrites, scope: Scope, kind: JobKind[P], payload: P) -> int:
    """Write a ``kind`` job with ``payload``, attempts bounded by the kind's policy; its id."""
    return jobs.enqueue_job(scope, kind.name, kind.dump(payload), kind.policy.max_attempts)


def has_pending(jobs: JobWrites, scope: Scope, kind: JobKind[P], payload: P) -> bool:
    """A ``kind`` job with this payload is waiting (not yet claimed) in ``scope``.

    Compares the stored form (``kind.dump``), which is the same for rows written before
    payloads were typed, so an upgrade does not queue duplicates."""
    return jobs.has_pending_job(scope, kind.name, kind.dump(payload))
