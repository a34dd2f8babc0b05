"""``embed_entities``: compute and store the vectors of graph entities stored without one."""

from __future__ import annotations

from omoide.jobs.kinds.base import Id, JobKind, Payload
from omoide.jobs.policy import RetryPolicy


class EmbedEntitiesPayload(Payload):
    entity_ids: list[Id]


EMBED_ENTITIES = JobKind("embed_entities", EmbedEntitiesPayload, RetryPolicy())
