"""Domain models shared by every layer.

Times are timezone-aware UTC ``datetime`` objects in the API and integer milliseconds since the
Unix epoch in storage: one unit everywhere (never seconds in one place and milliseconds in another).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any, Literal, NotRequired, TypeAlias

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
)
from typing_extensions import TypedDict

DEFAULT_ID = "default"
# The session a door files a message under when its client names none but the door's protocol
# needs one (a compat interface's default session, the MCP tools). Its messages are not one
# conversation but whatever the client sent over time: a search scores them as standalone
# memories, as it does messages written without a session.
UNNAMED_SESSION = "__default__"
MetadataValue: TypeAlias = str | int | float | bool | None
# A key is one clause of the statement: a thousand passed SQLite's expression depth (a 500).
MAX_METADATA_FILTERS = 100
Metadata: TypeAlias = dict[str, Any]


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def check_calendar(dt: datetime) -> datetime:
    """``dt`` (UTC if naive) if its instant in UTC is within years 1-9999, else ``ValueError``:
    times are stored in UTC and read back as datetimes, which could not hold year 0 or 10000
    (an offset can put a valid local time there)."""
    aware = dt if dt.tzinfo is not None else dt.replace(tzinfo=UTC)
    try:
        aware.astimezone(UTC)
    except OverflowError:
        raise ValueError(f"timestamp {dt.isoformat()} is outside years 1-9999 in UTC") from None
    return aware


def now_ms() -> int:
    return int(datetime.now(UTC).timestamp() * 1000)


def ms_to_dt(ms: int | None) -> datetime | None:
    return None if ms is None else datetime.fromtimestamp(ms / 1000, tz=UTC)


def dt_to_ms(dt: datetime) -> int:
    # Integer arithmetic: int(dt.timestamp() * 1000) can land 1 ms low through float rounding,
    # and then ``as_of=memory.valid_from`` would miss the memory itself.
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return (dt - _EPOCH) // timedelta(milliseconds=1)


class MemoryType(StrEnum):
    """What a memory is. ``raw`` is a message stored verbatim; the others are derived."""

    RAW = "raw"
    SEMANTIC = "semantic"
    USER_PROFILE = "user_profile"
    EPISODIC = "episodic"
    SUMMARY = "summary"
    CHUNK = "chunk"


class Scope(BaseModel):
    """The tenant a read or write belongs to. No query ever crosses two scopes."""

    model_config = ConfigDict(frozen=True)

    user_id: str = DEFAULT_ID
    scope_id: str = DEFAULT_ID


class MessageDump(TypedDict):
    """A dumped ``Message``: ``timestamp`` (ISO text) only when the message has one."""

    role: str
    content: str
    timestamp: NotRequired[str]


class Message(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: str = "user"
    content: str
    timestamp: datetime | None = Field(
        None,
        description="When the message was said (ISO 8601; UTC if no offset). Extraction reads "
        "relative dates ('yesterday', 'last month') from it; imported history keeps its time.",
    )

    @field_validator("timestamp")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        return None if value is None else check_calendar(value)

    @model_serializer(mode="wrap")
    def _without_empty_timestamp(self, handler: SerializerFunctionWrapHandler) -> MessageDump:
        # A message without a time dumps as it always did (episodes, exports, API replies);
        # a time dumps as ISO text, so a dump stays JSON-ready in every mode.
        data = handler(self)
        out = MessageDump(role=data["role"], content=data["content"])
        if self.timestamp is not None:
            out["timestamp"] = self.timestamp.isoformat()
        return out


class Session(BaseModel):
    id: str = Field(description="The session's external id, unique within its tenant.")
    user_id: str
    scope_id: str
    name: str | None = None
    project: str | None = None
    metadata: Metadata = Field(default_factory=dict)
    created_at: datetime
    updated_at: datetime


class Project(BaseModel):
    name: str
    user_id: str
    scope_id: str
    description: str | None = None
    isolated: bool = Field(
        False, description="Its sessions see only the project's memories, and nobody else's."
    )
    colour: str | None = None
    icon: str | None = None
    notes: str | None = None
    system_prompt: str | None = None
    created_at: datetime
    updated_at: datetime | None = None


class Episode(BaseModel):
    id: str
    session_id: str
    user_id: str
    scope_id: str
    messages: list[Message]
    created_at: datetime
    access_count: int = 0
    last_accessed_at: datetime | None = None
    consolidated_at: datetime | None = Field(
        None, description="When a consolidation merged this episode into a summary memory."
    )


class MemoryItem(BaseModel):
    id: str
    user_id: str
    scope_id: str
    session_id: str | None = None
    type: MemoryType = MemoryType.RAW
    text: str
    metadata: Metadata = Field(default_factory=dict)
    source_episodes: list[str] = Field(default_factory=list)
    valid_from: datetime
    invalid_at: datetime | None = None
    supersedes: str | None = None
    access_count: int = 0
    last_accessed_at: datetime | None = None
    created_at: datetime
    updated_at: datetime
    embedded: bool = Field(False, description="True once the memory has a vector.")


class HistoryEvent(StrEnum):
    ADD = "ADD"
    UPDATE = "UPDATE"
    DELETE = "DELETE"


class HistoryEntry(BaseModel):
    id: int
    memory_id: str
    event: HistoryEvent
    old_text: str | None = None
    new_text: str | None = None
    actor: str
    created_at: datetime


class Signal(BaseModel):
    """How one retrieval signal saw a hit: its rank (0 = best) and raw score."""

    rank: int
    score: float


class SearchHit(BaseModel):
    memory: MemoryItem
    score: float = Field(
        description="In [0, 1], higher is better. The default recipe (hybrid): the estimated "
        "probability that the hit is relevant, from its own evidence only; vector: the cosine."
    )
    signals: dict[str, Signal] = Field(
        default_factory=dict,
        description="Per-signal rank and score: 'keyword', 'vector', 'expansion' (bm25 of the "
        "expanded query), and the evidence the relevance used: 'cosine' (the hit's cosine, "
        "read for its score when the vector list did not reach it), 'coverage' (share of the "
        "query's words in the text), 'speaker', 'date', 'turn', 'assistant' (1 when it "
        "counted).",
    )


class SearchResult(BaseModel):
    hits: list[SearchHit]
    recipe: str
    degraded: bool = Field(False, description="True when a signal was unavailable.")
    warnings: list[str] = Field(default_factory=list)


class Page(BaseModel):
    items: list[MemoryItem]
    total: int = Field(description="All matching memories, not just this page.")
    limit: int
    offset: int


class JobState(StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


class Job(BaseModel):
    id: int
    kind: str
    state: JobState
    user_id: str
    scope_id: str
    payload: dict[str, Any]
    attempts: int
    max_attempts: int
    last_error: str | None = None
    run_after: datetime
    created_at: datetime
    updated_at: datetime
    result: dict[str, Any] | None = Field(
        None,
        description="What a job did: an extraction job's outcome ('done', 'partial' when some "
        "steps failed, 'failed'), each step's status and detail, and its LLM usage; kept while "
        "the job waits for a retry.",
    )


class SearchFilters(BaseModel):
    """Optional narrowing of a search or a listing; every field is ANDed."""

    model_config = ConfigDict(extra="forbid")

    session_id: str | None = None
    project: str | None = None
    types: list[MemoryType] | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None
    metadata: dict[str, MetadataValue] | None = Field(
        None,
        max_length=MAX_METADATA_FILTERS,
        description=f"Memories whose metadata holds each of these keys with that value (at most "
        f"{MAX_METADATA_FILTERS} keys).",
    )
    as_of: datetime | None = Field(
        None, description="Return what was valid at this time instead of what is valid now."
    )
    include_invalid: bool = False


AddInput: TypeAlias = str | list[Message] | list[dict[str, str]]


ExtractionState: TypeAlias = Literal[
    "off", "disabled", "pending", "running", "done", "partial", "failed"
]


class ExtractionStatus(BaseModel):
    """What became of the LLM extraction an ``add`` asked for.

    ``off``: not asked for (``infer=False``, every switch off, or a non-raw ``type``);
    ``disabled``: asked for but no LLM is configured; otherwise the state of the extraction job
    ``job_id`` (``pending`` or ``running`` when ``wait`` was not used or timed out);
    ``partial``: the job is ``done`` but some steps failed (``steps[name]["status"] ==
    "failed"`` with the error as ``detail``; the job's ``result["outcome"]`` says the same).
    """

    state: ExtractionState
    job_id: int | None = None
    reason: str | None = None
    steps: dict[str, Any] = Field(
        default_factory=dict,
        description="Per step: 'done', 'skipped' or 'failed', with a detail (the error if failed).",
    )


class AddResult(BaseModel):
    """``Engine.add_messages``: the stored messages and what became of their extraction."""

    items: list[MemoryItem]
    extraction: ExtractionStatus
    extracted: list[MemoryItem] = Field(
        default_factory=list,
        description="Memories the extraction job wrote, when it finished within the wait.",
    )


class Entity(BaseModel):
    """A named thing of one tenant's knowledge graph; ``(name, type)`` is unique per tenant."""

    id: str
    user_id: str
    scope_id: str
    name: str
    type: str
    mention_count: int = 1
    confidence: float = 1.0
    source: str = "extraction"
    episodes: list[str] = Field(
        default_factory=list, description="Episodes the entity was extracted from."
    )
    last_seen_at: datetime
    created_at: datetime


def entity_text(name: str, type_: str) -> str:
    """What an entity is embedded as, e.g. ``"Mei (person)"``."""
    return f"{name} ({type_})"


class Relationship(BaseModel):
    """A directed, labelled edge ``from -[label]-> to`` between two entities of one tenant."""

    id: str
    user_id: str
    scope_id: str
    from_id: str
    from_name: str
    to_id: str
    to_name: str
    label: str
    mention_count: int = 1
    notes: str | None = None
    last_seen_at: datetime
    created_at: datetime


class EntityHit(BaseModel):
    entity: Entity
    score: float = Field(
        description="1.0 when the name occurs in the query (or the query in the name), "
        "else the cosine similarity of the query and the entity's name."
    )


class EntitySearchResult(BaseModel):
    hits: list[EntityHit]
    degraded: bool = Field(False, description="True when the embedder was unavailable.")
    warnings: list[str] = Field(default_factory=list)


VariableValue: TypeAlias = str | bool | int | float


class Variable(BaseModel):
    """A typed key/value of one tenant, declared by a caller and filled from conversations."""

    name: str
    value: VariableValue
    type: Literal["string", "boolean", "integer", "number"]
    updated_at: datetime


class TokenUsage(BaseModel):
    """LLM tokens spent on a tenant's extraction jobs (failed calls included)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    requests: int = 0


# knowledge graph traversal ---------------------------------------------------------------
class GraphNode(Entity):
    """An entity reached by a traversal, with its distance in edges from where it started."""

    depth: int = Field(ge=0)


class Subgraph(BaseModel):
    """Nodes and the edges between them (``{nodes, edges}``)."""

    nodes: list[GraphNode]
    edges: list[Relationship]
    truncated: bool = Field(False, description="True when the node limit cut the walk short.")


# context assembly ------------------------------------------------------------------------
ContextSection: TypeAlias = Literal[
    "profile", "variables", "summary", "memories", "graph", "recent"
]
ContextKind: TypeAlias = Literal["memory", "variable", "entity", "relationship"]


class ContextItem(BaseModel):
    """One line of a context block and what it cites: a memory, entity or relationship id, or
    ``var:<name>`` for a variable."""

    id: str
    kind: ContextKind
    section: ContextSection
    text: str = Field(description="The line exactly as it appears in the block.")
    tokens: int
    score: float | None = Field(None, description="Search score, for relevant memories.")


class ContextResult(BaseModel):
    """A ready-to-paste block of what omoide knows for a query, within a token budget."""

    text: str
    tokens: int = Field(description="Tokens of ``text``, counted with ``tokenizer``.")
    token_budget: int
    tokenizer: str
    profile: list[ContextItem] = Field(default_factory=list)
    variables: list[ContextItem] = Field(default_factory=list)
    summary: ContextItem | None = None
    memories: list[ContextItem] = Field(default_factory=list)
    graph: list[ContextItem] = Field(default_factory=list)
    recent: list[ContextItem] = Field(
        default_factory=list, description="The session's latest turns: the recency floor."
    )
    dropped: int = Field(0, description="Candidates left out for lack of budget.")
    degraded: bool = False
    warnings: list[str] = Field(default_factory=list)

    @property
    def items(self) -> list[ContextItem]:
        """Every item, in the order of the block."""
        head = [*self.profile, *self.variables, *([self.summary] if self.summary else [])]
        return [*head, *self.memories, *self.graph, *self.recent]


# chunks and consolidation ----------------------------------------------------------------
class ChunkResult(BaseModel):
    """What one chunking pass over a session did (chunk memories made, mode, pending)."""

    session_id: str
    mode: Literal["standard", "consolidation"]
    chunks: list[str] = Field(default_factory=list, description="Ids of new chunk memories.")
    pending: int = Field(0, description="New messages not yet in a chunk.")
    summary_id: str | None = Field(None, description="The rolling summary written, if any.")
    reason: str = ""


class ConsolidationCandidate(BaseModel):
    episode_id: str
    score: float = Field(description="access_count / (1 + days since last access); 0 if never.")
    access_count: int
    last_accessed_at: datetime | None = None
    created_at: datetime


class ConsolidationCandidates(BaseModel):
    """A session's episodes ranked for consolidation, lowest score (most eligible) first."""

    session_id: str
    eligible: bool
    reason: str | None = None
    episode_count: int = Field(description="Episodes of the session not yet consolidated.")
    candidates: list[ConsolidationCandidate] = Field(default_factory=list)


class ConsolidationReport(BaseModel):
    """What a consolidation pass changes (``dry_run``) or changed.

    ``episodes`` are merged into one summary memory and marked consolidated (kept); ``memories``
    (their verbatim turns) are invalidated, recorded in their history and lose their
    ``vectors``; ``entities`` left with no unconsolidated provenance are deleted with their
    ``relationships``. ``id`` names the pass for ``revert_consolidation``.
    """

    id: str | None = None
    session_id: str
    dry_run: bool
    eligible: bool
    reason: str | None = None
    episodes: list[str] = Field(default_factory=list)
    memories: list[str] = Field(default_factory=list)
    vectors: list[str] = Field(default_factory=list)
    entities: list[str] = Field(default_factory=list)
    relationships: list[str] = Field(default_factory=list)
    summary_id: str | None = None
    summary: str | None = None

    @property
    def changes(self) -> bool:
        return bool(self.episodes or self.entities)


# Write records: what a store writes, built by the services (and by an interface that hands
# them to ``Memory``). Defined here so that every layer may name them; the store's ports use
# these very classes.
@dataclass
class NewMemory:
    """A memory to insert. ``session_id`` is the session's external id."""

    text: str
    type: MemoryType = MemoryType.RAW
    metadata: dict[str, Any] = field(default_factory=dict)
    session_id: str | None = None
    context: str = ""
    source_episodes: list[str] = field(default_factory=list)
    valid_from_ms: int | None = None
    supersedes: str | None = None
    created_at_ms: int | None = None  # default now; a consolidation summary takes its episodes'


@dataclass(frozen=True)
class SessionMessage:
    """One message of a session's episodes, in conversation order (``created_ms``, ``seq``,
    ``index``): ``seq`` is the episode's insertion order, ``index`` the message's place in it."""

    episode_id: str
    created_ms: int
    seq: int
    index: int
    role: str
    content: str


@dataclass(frozen=True)
class ChunkCursor:
    """Where a session's last chunk ended: the hash and position of its last message."""

    last_hash: str
    created_ms: int
    seq: int
    index: int


@dataclass(frozen=True)
class NewChunk:
    """A chunk to record in the ledger together with its memory."""

    memory: NewMemory
    cursor: ChunkCursor
    messages: int
    tokens: int
