"""nexusAI's wire shapes: what its orchestration service parses (seed 000).

Units as nexusAI's memory service stores them: every ``created_at``, ``updated_at``,
``last_seen_at`` and ``consolidated_at`` is unix seconds (SQLite ``unixepoch()``), while an
episode's ``last_accessed_at`` is unix milliseconds (``Date.now()``). ``/v1`` keeps omoide's
ISO 8601 times; only the nexusAI routes answer in these shapes.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from omoide.types import (
    ConsolidationCandidates,
    Entity,
    Episode,
    GraphNode,
    MemoryItem,
    Message,
    Project,
    Relationship,
    Session,
    Subgraph,
)

Seconds = Field(description="Unix seconds.")


def secs(when: datetime) -> int:
    return int(when.timestamp())


def millis(when: datetime) -> int:
    return int(when.timestamp() * 1000)


class NexusSession(BaseModel):
    id: str = Field(description="The external id (omoide has no separate integer id).")
    external_id: str
    name: str | None
    project: str | None = Field(description="The project's name.")
    metadata: dict[str, Any]
    user_id: str
    scope_id: str
    created_at: int = Seconds
    updated_at: int = Seconds

    @classmethod
    def of(cls, s: Session) -> NexusSession:
        return cls(
            id=s.id,
            external_id=s.id,
            name=s.name,
            project=s.project,
            metadata=s.metadata,
            user_id=s.user_id,
            scope_id=s.scope_id,
            created_at=secs(s.created_at),
            updated_at=secs(s.updated_at),
        )


class NexusEpisode(BaseModel):
    id: str
    session_id: str
    user_message: str
    ai_response: str | None
    messages: list[Message]
    created_at: int = Seconds
    access_count: int
    last_accessed_at: int | None = Field(description="Unix milliseconds; null until touched.")
    consolidated_at: int | None = Seconds

    @classmethod
    def of(cls, e: Episode) -> NexusEpisode:
        user = next((m.content for m in e.messages if m.role == "user"), "")
        reply = next((m.content for m in e.messages if m.role == "assistant"), None)
        return cls(
            id=e.id,
            session_id=e.session_id,
            user_message=user,
            ai_response=reply,
            messages=e.messages,
            created_at=secs(e.created_at),
            access_count=e.access_count,
            last_accessed_at=millis(e.last_accessed_at) if e.last_accessed_at else None,
            consolidated_at=secs(e.consolidated_at) if e.consolidated_at else None,
        )


class NexusEpisodeHit(NexusEpisode):
    score: float = Field(description="The best keyword score of its messages; higher is better.")


class NexusEntity(BaseModel):
    id: str
    name: str
    type: str
    mention_count: int
    confidence: float
    source: str
    episodes: list[str]
    last_seen_at: int = Seconds
    created_at: int = Seconds

    @classmethod
    def of(cls, e: Entity) -> NexusEntity:
        return cls(
            id=e.id,
            name=e.name,
            type=e.type,
            mention_count=e.mention_count,
            confidence=e.confidence,
            source=e.source,
            episodes=e.episodes,
            last_seen_at=secs(e.last_seen_at),
            created_at=secs(e.created_at),
        )


class NexusNode(NexusEntity):
    depth: int

    @classmethod
    def of_node(cls, n: GraphNode) -> NexusNode:
        return cls(**NexusEntity.of(n).model_dump(), depth=n.depth)


class NexusRelationship(BaseModel):
    id: str
    from_id: str
    to_id: str
    label: str
    mention_count: int
    notes: str | None
    from_name: str
    to_name: str
    last_seen_at: int = Seconds
    created_at: int = Seconds

    @classmethod
    def of(cls, r: Relationship) -> NexusRelationship:
        return cls(
            id=r.id,
            from_id=r.from_id,
            to_id=r.to_id,
            label=r.label,
            mention_count=r.mention_count,
            notes=r.notes,
            from_name=r.from_name,
            to_name=r.to_name,
            last_seen_at=secs(r.last_seen_at),
            created_at=secs(r.created_at),
        )


class NexusSubgraph(BaseModel):
    nodes: list[NexusNode]
    edges: list[NexusRelationship]
    truncated: bool

    @classmethod
    def of(cls, g: Subgraph) -> NexusSubgraph:
        return cls(
            nodes=[NexusNode.of_node(n) for n in g.nodes],
            edges=[NexusRelationship.of(r) for r in g.edges],
            truncated=g.truncated,
        )


class NexusProject(BaseModel):
    name: str
    description: str | None
    colour: str | None
    icon: str | None
    isolated: bool
    notes: str | None
    system_prompt: str | None
    created_at: int = Seconds
    updated_at: int | None = Seconds

    @classmethod
    def of(cls, p: Project) -> NexusProject:
        fields = p.model_dump(include={"name", "description", "colour", "icon", "isolated"})
        return cls(
            **fields,
            notes=p.notes,
            system_prompt=p.system_prompt,
            created_at=secs(p.created_at),
            updated_at=secs(p.updated_at) if p.updated_at else None,
        )


class NexusSummary(BaseModel):
    id: str
    session_id: str | None
    text: str
    metadata: dict[str, Any]
    created_at: int = Seconds
    updated_at: int = Seconds

    @classmethod
    def of(cls, m: MemoryItem) -> NexusSummary:
        return cls(
            id=m.id,
            session_id=m.session_id,
            text=m.text,
            metadata=m.metadata,
            created_at=secs(m.created_at),
            updated_at=secs(m.updated_at),
        )


class Paged(BaseModel):
    total: int
    limit: int
    offset: int


class NexusSessionPage(Paged):
    items: list[NexusSession]


class NexusEpisodePage(Paged):
    items: list[NexusEpisode]


class NexusEntityPage(Paged):
    items: list[NexusEntity]


class NexusRelationshipPage(Paged):
    items: list[NexusRelationship]


class NexusProjectPage(Paged):
    items: list[NexusProject]


class NexusSummaryPage(Paged):
    items: list[NexusSummary]


class NexusEpisodeHits(BaseModel):
    episodes: list[NexusEpisodeHit] = Field(description="One per exchange, best first.")
    degraded: bool = False
    warnings: list[str] = Field(default_factory=list)


class NexusCandidate(BaseModel):
    episode_id: str
    score: float
    access_count: int
    last_accessed_at: int | None = Field(description="Unix milliseconds.")
    created_at: int = Seconds


class NexusCandidates(BaseModel):
    session_id: str
    eligible: bool
    reason: str | None
    episode_count: int
    candidates: list[NexusCandidate]

    @classmethod
    def of(cls, c: ConsolidationCandidates) -> NexusCandidates:
        return cls(
            session_id=c.session_id,
            eligible=c.eligible,
            reason=c.reason,
            episode_count=c.episode_count,
            candidates=[
                NexusCandidate(
                    episode_id=x.episode_id,
                    score=x.score,
                    access_count=x.access_count,
                    last_accessed_at=millis(x.last_accessed_at) if x.last_accessed_at else None,
                    created_at=secs(x.created_at),
                )
                for x in c.candidates
            ],
        )
