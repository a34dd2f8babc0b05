"""Every job kind omoide stores, one module each; ``KINDS`` maps a row's ``kind`` to its kind.

A kind's name is stored on every row, so it never changes; a payload change is a new payload
version with an upgrade (see ``base``).
"""

from __future__ import annotations

from typing import Any

from omoide.jobs.kinds.base import Id, JobKind, Payload, Upgrade
from omoide.jobs.kinds.chunk import CHUNK, ChunkPayload
from omoide.jobs.kinds.consolidate import CONSOLIDATE, ConsolidatePayload
from omoide.jobs.kinds.dream import DREAM_SWEEP, DreamSweepPayload
from omoide.jobs.kinds.embed import EMBED, EmbedPayload
from omoide.jobs.kinds.embed_entities import EMBED_ENTITIES, EmbedEntitiesPayload
from omoide.jobs.kinds.expiry import (
    EXPIRY_DELETE,
    EXPIRY_REFRESH,
    ExpiryDeletePayload,
    ExpiryRefreshPayload,
    Tenant,
)
from omoide.jobs.kinds.extract import EXTRACT, ExtractPayload

KINDS: dict[str, JobKind[Any]] = {
    kind.name: kind
    for kind in (
        *(EMBED, EMBED_ENTITIES, EXTRACT, CHUNK, CONSOLIDATE),
        *(EXPIRY_REFRESH, EXPIRY_DELETE, DREAM_SWEEP),
    )
}

__all__ = [
    "CHUNK",
    "CONSOLIDATE",
    "DREAM_SWEEP",
    "EMBED",
    "EMBED_ENTITIES",
    "EXPIRY_DELETE",
    "EXPIRY_REFRESH",
    "EXTRACT",
    "KINDS",
    "ChunkPayload",
    "ConsolidatePayload",
    "DreamSweepPayload",
    "EmbedEntitiesPayload",
    "EmbedPayload",
    "ExpiryDeletePayload",
    "ExpiryRefreshPayload",
    "ExtractPayload",
    "Id",
    "JobKind",
    "Payload",
    "Tenant",
    "Upgrade",
]
