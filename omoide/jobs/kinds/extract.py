"""``extract``: run an ``add``'s LLM extraction steps over its messages.

The job reads its messages from the episode (``episode_id``) or, for an add without one, from
the stored turns (``memory_ids``). ``variables`` are ``MemVariable`` dumps; the engine validates
them (this layer cannot import ``omoide.extract``). Missing optional fields default as the
engine's reads always did.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from omoide.jobs.kinds.base import Id, JobKind, Payload
from omoide.jobs.policy import RetryPolicy


class ExtractPayload(Payload):
    steps: list[str] = Field(default_factory=list)
    variables: list[dict[str, Any]] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    episode_id: Id | None = None
    session_id: Id | None = None
    memory_ids: list[Id] = Field(default_factory=list)


EXTRACT = JobKind("extract", ExtractPayload, RetryPolicy())
