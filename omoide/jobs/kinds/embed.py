"""``embed``: compute and store the vectors of memories stored without one (embedder down)."""

from __future__ import annotations

from omoide.jobs.kinds.base import Id, JobKind, Payload
from omoide.jobs.policy import RetryPolicy


class EmbedPayload(Payload):
    memory_ids: list[Id]


EMBED = JobKind("embed", EmbedPayload, RetryPolicy())
