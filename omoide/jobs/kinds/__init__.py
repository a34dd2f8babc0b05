"""Every job kind omoide stores, one module each; ``KINDS`` maps a row's ``kind`` to its kind.

A kind's name is stored on every row, so it never changes; a payload change is a new payload
version with an upgrade (see ``base``).
"""

from __future__ import annotations

from typing import Any

from omoide.jobs.kinds.base import Id, JobKind, Payload, Upgrade
from omoide.jobs.kinds.chunk import CHUNK, ChunkPayload
from omoide.jobs.kinds.consolidate import CONSOLIDATE, ConsolidatePayload
from omoide.jobs.kinds.embed import EMBED, EmbedPayload
from omoide.jobs.kinds.embed_entities import EMBED_ENTITIES, EmbedEntitiesPayload
from omoide.jobs.kinds.extract import EXTRACT, ExtractPayload

KINDS: dict[str, JobKind[Any]] = {
    kind.name: kind for kind in (EMBED, EMBED_ENTITIES, EXTRACT, CHUNK, CONSOLIDATE)
}

__all__ = [
    "CHUNK",
    "CONSOLIDATE",
    "EMBED",
    "EMBED_ENTITIES",
    "EXTRACT",
    "KINDS",
    "ChunkPayload",
    "ConsolidatePayload",
    "EmbedEntitiesPayload",
    "EmbedPayload",
    "ExtractPayload",
    "Id",
    "JobKind",
    "Payload",
    "Upgrade",
]
