"""``MemoryService``: memories written and read, one tenant at a time.

A write is one transaction: the memories (and the episode they came in), their vectors or an
``embed`` job, the chunk job the trigger rules call for, and the extraction job an ``add``
asked for. Vectors are computed before the transaction, so an embedder outage never holds the
writer lock; it only turns the vectors into a job.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from omoide.engine.chunks.service import ChunkTrigger
from omoide.engine.shared.checks import check_filters, check_scope, check_writable
from omoide.engine.shared.embedding import Embedding, index
from omoide.engine.shared.events import MemoryEvents
from omoide.engine.shared.job_signal import JobSignal
from omoide.errors import InvalidInput, NotFound
from omoide.jobs.kinds import CHUNK, EMBED, EXTRACT, ExtractPayload
from omoide.jobs.queue import enqueue
from omoide.store.ports.memories import MemoryReads
from omoide.store.protocol import LatestTurn, Neighbour, NewMemory, Transactions, Tx
from omoide.types import (
    DEFAULT_ID,
    HistoryEntry,
    MemoryItem,
    MemoryType,
    Message,
    Page,
    Scope,
    SearchFilters,
    SearchHit,
    Signal,
    now_ms,
)
from omoide.validate import check_limit, check_text, check_value

NEIGHBOUR_CHARS = 1000
# Chat messages added without a session form an implicit conversation of their tenant (user +
# scope): a turn continues the conversation of the tenant's latest turn when that turn has no
# session either, was said at most this long before (or after) it, on the same UTC calendar day.
# A standalone text (one fact an agent writes) is never linked: a neighbour's words would become
# its context, and a question about the neighbour would find it.
# A turn's time is its ``created_at``: a message's ``timestamp`` (``add``), ``created_at_ms``
# (``add_many``), or the time it was added.
CONVERSATION_GAP_MS = 30 * 60 * 1000
# The context of a standalone memory: one space (no words), so that the next chat message sees
# the tenant's latest turn is nobody's neighbour.
STANDALONE = " "
_DAY_MS = 24 * 3600 * 1000
_ALL = 1_000_000  # "every memory of a session": a listing's limit


class MemoryService:
    """``events`` hear of each committed write (with the types written, when known) and of
    each listing before it runs: how the markdown mirror follows the database."""

    def __init__(
        self,
        memory_reads: MemoryReads,
        transactions: Transactions,
        embedding: Embedding,
        signal: JobSignal,
        trigger: ChunkTrigger,
        *,
        actor: str,
        max_text_chars: int,
        max_messages: int = 1_000,
        events: MemoryEvents | None = None,
        implicit_conversations: bool = True,
    ) -> None:
        self._memory_reads = memory_reads
        self._transactions = transactions
        self._implicit = implicit_conversations
        self._events = events or MemoryEvents()
        self._embedding = embedding
        self._signal = signal
        self._trigger = trigger
        self._actor = actor
        self.max_text_chars = max_text_chars
        self.max_messages = max_messages  # messages one transaction may write (writers wait)

    # writes ---------------------------------------------------------------------------
    def add_many(
        self,
        items: Sequence[NewMemory],
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
    ) -> list[MemoryItem]:
        """Bulk insert, embedded in batches: the fast path for imports. A record without a
        session joins an implicit conversation only when its metadata names a ``role`` (a chat
        message)."""
        for item in items:
            check_text(item.text, self.max_text_chars)
        return self.write(Scope(user_id=user_id, scope_id=scope_id), list(items), None)[0]

    def write(
        self,
        scope: Scope,
        records: list[NewMemory],
        episode: list[Message] | None,
        extraction: ExtractPayload | None = None,
        chat: bool | None = None,
    ) -> tuple[list[MemoryItem], dict[str, int]]:
        """Insert ``records`` (and the episode), their vectors or embed job, a due chunk job
        and the extraction job ``extraction`` describes, in one transaction; return the items
        and the ids of the jobs queued, by kind. ``chat``: whether the records are chat
        messages (None: each record is one when its metadata names a ``role``)."""
        if not records:
            raise InvalidInput("nothing to add")
        check_writable(scope, records, episode)
        vectors = self._embedding.try_embed([r.text for r in records])
        jobs: dict[str, int] = {}
        with self._transactions.transaction() as tx:
            sessions = sorted({r.session_id for r in records if r.session_id})
            tx.sessions.ensure_sessions(scope, sessions)
            source: list[str] = []
            if episode is not None and len(sessions) == 1:
                source = [tx.sessions.insert_episode(scope, sessions[0], episode).id]
            self._link_neighbours(tx, scope, records, chat)
            for record in records:
                if not record.source_episodes and source:
                    record.source_episodes = source
            # the vectors go with the memories (one statement on PostgreSQL)
            items = tx.memories.insert_memories(scope, records, self._actor, vectors)
            if source and (chunk_job := self._trigger.queue(tx, scope, sessions[0])):
                jobs[CHUNK.name] = chunk_job
            embed_job = (
                None if vectors is not None else index(tx, scope, [i.id for i in items], None)
            )
            if embed_job is not None:
                jobs[EMBED.name] = embed_job
            if extraction is not None:
                payload = extraction.model_copy(
                    update={
                        "episode_id": source[0] if source else None,
                        "session_id": sessions[0] if len(sessions) == 1 else None,
                        "memory_ids": [i.id for i in items],
                    }
                )
                jobs[EXTRACT.name] = enqueue(tx.jobs, scope, EXTRACT, payload)
        if jobs:
            self._signal.wake()
        self._events.written(scope, {r.type for r in records})
        if vectors is None:
            return self._memory_reads.get_memories(scope, [i.id for i in items]), jobs
        return [i.model_copy(update={"embedded": True}) for i in items], jobs

    def record_turns(
        self,
        session_id: str,
        messages: Sequence[Message],
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        metadata: dict[str, Any] | None = None,
    ) -> list[MemoryItem]:
        """Store a conversation's messages as they are, for a caller that chunks the session
        itself: one raw memory per message (metadata: its ``role``, then ``metadata``) and
        their episode, in episodes of at most ``max_messages`` (one transaction each, so a
        long history never holds the writer lock long). No extraction, no chunk job, no
        neighbour context. The session is created if needed.

            >>> m.record_turns("chat-1", [Message(role="user", content="hi")], user_id="alice")
        """
        for message in messages:
            check_text(message.content, self.max_text_chars)
        scope = Scope(user_id=user_id, scope_id=scope_id)
        items: list[MemoryItem] = []
        for start in range(0, len(messages), self.max_messages):
            batch = list(messages[start : start + self.max_messages])
            items += self._record_turn_batch(scope, session_id, batch, metadata or {})
        return items

    def _record_turn_batch(
        self, scope: Scope, session_id: str, batch: list[Message], metadata: dict[str, Any]
    ) -> list[MemoryItem]:
        records = [
            NewMemory(text=m.content, session_id=session_id, metadata={"role": m.role, **metadata})
            for m in batch
        ]
        vectors = self._embedding.try_embed([r.text for r in records])
        with self._transactions.transaction() as tx:
            tx.sessions.ensure_session(scope, session_id)
            episode = tx.sessions.insert_episode(scope, session_id, batch)
            items = [self.insert(tx, scope, r, [episode.id]) for r in records]
            index(tx, scope, [i.id for i in items], vectors)
        return items

    def insert(self, tx: Tx, scope: Scope, record: NewMemory, source: list[str]) -> MemoryItem:
        """Insert one memory in ``tx``; without its own source episodes it gets ``source``."""
        if not record.source_episodes and source:
            record.source_episodes = source
        return tx.memories.insert_memory(scope, record, self._actor)

    def _link_neighbours(
        self, tx: Tx, scope: Scope, records: list[NewMemory], chat: bool | None
    ) -> None:
        """Give each raw turn of a conversation its previous and next turn as keyword context.

        A turn's meaning often lives in its neighbours (the question it answers), so the keyword
        index sees them too, at a lower weight. A conversation is a session, or, for turns added
        without one, an implicit conversation (``same_conversation``) of chat messages only, and
        only with ``implicit_conversations`` on. Turns of one batch are
        linked here, before they are inserted; only the stored turn before a batch is updated
        (one full-text rewrite per conversation and batch, not one per turn). A record that
        comes with its own context keeps it.
        """
        now = now_ms()
        last: dict[str | None, NewMemory] = {}
        for record in records:
            if record.type is not MemoryType.RAW:
                continue
            key = record.session_id or None
            if key is None and not (
                self._implicit and (chat if chat is not None else "role" in record.metadata)
            ):
                record.context = record.context or STANDALONE  # nobody's neighbour
                continue
            if not record.context:
                prev = last.get(key)
                if prev is not None and (
                    key is not None or same_conversation(_time(prev, now), _time(record, now))
                ):
                    text = record.text[:NEIGHBOUR_CHARS]
                    record.context = prev.text[:NEIGHBOUR_CHARS]
                    prev.context = f"{prev.context}\n{text}"
                elif prev is None:
                    self._link_stored(tx, scope, record, _time(record, now))
            last[key] = record

    def _link_stored(self, tx: Tx, scope: Scope, record: NewMemory, at_ms: int) -> None:
        """Link the first turn of a batch to the stored turn before it, if that is one of its
        conversation: the session's last turn, or the tenant's latest session-less turn."""
        text = record.text[:NEIGHBOUR_CHARS]
        stored: Neighbour | LatestTurn | None
        if record.session_id:
            stored = tx.memories.last_in_session(scope, record.session_id, MemoryType.RAW)
        else:
            stored = tx.memories.latest_turn(scope, MemoryType.RAW)
            if stored is not None and (
                stored.session_id is not None
                or stored.context == STANDALONE
                or not same_conversation(stored.created_at_ms, at_ms)
            ):
                stored = None
        if stored is not None:
            record.context = stored.text[:NEIGHBOUR_CHARS]
            tx.memories.set_context(scope, stored.id, f"{stored.context}\n{text}")

    def update(
        self,
        memory_id: str,
        text: str | None = None,
        metadata: dict[str, Any] | None = None,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
    ) -> MemoryItem:
        """Change a memory's text and/or metadata; the change is recorded in its history."""
        if text is None and metadata is None:
            raise InvalidInput("update needs text or metadata")
        if text is not None:
            check_text(text, self.max_text_chars)
        check_value(metadata, "metadata")
        scope = Scope(user_id=user_id, scope_id=scope_id)
        check_scope(scope)
        vectors = self._embedding.try_embed([text]) if text is not None else None
        with self._transactions.transaction() as tx:
            item = tx.memories.update_memory(scope, memory_id, text, metadata, self._actor)
            if text is not None:
                index(tx, scope, [memory_id], vectors)
        self._signal.wake()
        self._events.written(scope, {item.type})
        return self.get(memory_id, user_id=user_id, scope_id=scope_id) if text else item

    def delete(
        self, memory_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> None:
        """Delete one memory with its vector and index rows; its history records the delete."""
        scope = Scope(user_id=user_id, scope_id=scope_id)
        with self._transactions.transaction() as tx:
            tx.memories.delete_memory(scope, memory_id, self._actor)
        self._events.written(scope)

    def delete_all(self, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID) -> int:
        """Delete everything of one tenant (memories, sessions, history, jobs); return the count."""
        scope = Scope(user_id=user_id, scope_id=scope_id)
        with self._transactions.transaction() as tx:
            deleted = tx.admin.delete_scope(scope)
        self._events.written(scope)
        return deleted

    def reset(self) -> None:
        """Delete every tenant's data and the recorded embedding model. Irreversible."""
        with self._transactions.transaction() as tx:
            tx.admin.delete_everything()
        self._embedding.forget_signature()

    # reads ----------------------------------------------------------------------------
    def get(
        self, memory_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> MemoryItem:
        found = self._memory_reads.get_memories(
            Scope(user_id=user_id, scope_id=scope_id), [memory_id]
        )
        if not found:
            raise NotFound(f"memory {memory_id!r} not found", id=memory_id)
        return found[0]

    def get_all(
        self,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        filters: SearchFilters | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> Page:
        """One page of memories, newest first, with the true total of all that match."""
        check_limit(limit, offset)
        check_filters(filters)
        scope = Scope(user_id=user_id, scope_id=scope_id)
        self._events.reading(scope)
        items, total = self._memory_reads.list_memories(
            scope, filters or SearchFilters(), limit, offset
        )
        return Page(items=items, total=total, limit=limit, offset=offset)

    def session_memories(
        self,
        session_id: str,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        types: Sequence[MemoryType] | None = None,
        include_invalid: bool = False,
        limit: int | None = None,
    ) -> list[MemoryItem]:
        """The session's memories (of ``types``; valid ones only unless ``include_invalid``),
        newest first: all of them, or the newest ``limit``. An unknown session has none.

            >>> [c.text for c in m.session_memories("chat-1", types=["chunk"], limit=2)]
        """
        if limit is not None:
            check_limit(limit, 0, maximum=_ALL)
        filters = SearchFilters(
            session_id=session_id,
            types=list(types) if types is not None else None,
            include_invalid=include_invalid,
        )
        scope = Scope(user_id=user_id, scope_id=scope_id)
        return self._memory_reads.list_memories(scope, filters, limit or _ALL, 0)[0]

    def keyword_search(
        self,
        terms: Sequence[str],
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        filters: SearchFilters | None = None,
        limit: int = 10,
    ) -> list[SearchHit]:
        """The memories matching any of ``terms`` (each a phrase, never query syntax) and
        ``filters``, ranked by bm25 alone: no vectors, no fusion, no recipe. Each hit's
        ``signals["keyword"]`` holds its rank and score.

            >>> [h.memory.text for h in m.keyword_search(["Lisbon", "team offsite"])]
        """
        check_limit(limit, 0, maximum=_ALL)
        check_filters(filters)
        scope = Scope(user_id=user_id, scope_id=scope_id)
        ranked = self._memory_reads.keyword_search(
            scope, list(terms), filters or SearchFilters(), limit
        )
        found = self._memory_reads.get_memories(scope, [i for i, _ in ranked])
        items = {m.id: m for m in found}
        return [
            SearchHit(memory=items[i], score=s, signals={"keyword": Signal(rank=rank, score=s)})
            for rank, (i, s) in enumerate(ranked)
            if i in items
        ]

    def history(
        self, memory_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> list[HistoryEntry]:
        """What happened to a memory, oldest first. For an extracted fact this covers all its
        versions (memories linked by ``supersedes``): ADD, then one UPDATE per new version
        (with the old and the new text), then DELETE if it was invalidated.
        """
        return self._memory_reads.history(Scope(user_id=user_id, scope_id=scope_id), memory_id)

    def owner(self, memory_id: str) -> Scope:
        """The tenant of memory ``memory_id`` (deleted ones too, through their history), in
        any tenant: for operations that name only an id. ``NotFound`` if no tenant has it."""
        scope = self._memory_reads.owner(memory_id)
        if scope is None:
            raise NotFound(f"memory {memory_id!r} not found", id=memory_id)
        return scope


def same_conversation(before_ms: int, after_ms: int) -> bool:
    """Whether two session-less turns said at these times belong to one implicit conversation:
    at most ``CONVERSATION_GAP_MS`` apart and on the same UTC day (a gap or a new day starts
    the next one)."""
    return (
        abs(after_ms - before_ms) <= CONVERSATION_GAP_MS
        and before_ms // _DAY_MS == after_ms // _DAY_MS
    )


def _time(record: NewMemory, now: int) -> int:
    return record.created_at_ms or now
