"""``chunk``: a chunking pass over one session (``now``: asked for explicitly, not triggered).

Retries only on a concurrent change (``Conflict``) or a retryable backend error; a deleted
session is the handler's to finish as skipped.
"""

from __future__ import annotations

from omoide.errors import Conflict
from omoide.jobs.kinds.base import Id, JobKind, Payload
from omoide.jobs.policy import RetryPolicy


class ChunkPayload(Payload):
    session_id: Id
    now: bool = False


CHUNK = JobKind("chunk", ChunkPayload, RetryPolicy(retryable_errors=(Conflict,)))
