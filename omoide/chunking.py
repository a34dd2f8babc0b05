"""When to make chunk memories: the trigger rules as one pure function.

``plan_chunks(messages, ledger, config)`` reads nothing and writes nothing, so the rules can be
tested at their exact thresholds and reused by any interface that chunks sessions:

- The ``lookback_start_turn`` most recent messages are never chunked (they may be incomplete).
- Messages up to and including the ledger's last hash were chunked already; the rest are new.
- **Standard mode** (the session has chunk state: a pass has run on it): a chunk closes
  as soon as its messages' estimated tokens reach ``chunk_estimated_token_size`` *or* it holds
  ``max_messages_between_chunks`` messages, whichever comes first.
- **Consolidation mode** (no chunk state: a new session, or one whose chunks were reset): only
  the token threshold applies, so a backlog becomes fewer, larger chunks.
- New messages that close no chunk stay pending for a later pass.

Tokens are the rough estimate (``omoide.retrieval.context.estimate_tokens``) of the chunk's
message contents joined by newlines.

    >>> decision = plan_chunks(messages, Ledger(exists=True), ChunkConfig())
    >>> [len(chunk) for chunk in decision.chunks], len(decision.pending)
    ([5], 2)
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from omoide.config import ChunkConfig
from omoide.retrieval.context import CHARS_PER_TOKEN, SAFETY_MARGIN, WORD_TOKENS, estimate_tokens
from omoide.types import ChunkCursor, SessionMessage

# A backlog (a long session chunked for the first time, or after a reset) is chunked a pass at
# a time, each pass a job of its own, so one job's LLM calls stay bounded.
MAX_CHUNKS_PER_PASS = 20

Mode: TypeAlias = Literal["standard", "consolidation"]
SortKey: TypeAlias = tuple[int, ...]


@dataclass(frozen=True)
class ChunkMessage:
    """A message as the rules see it: its hash, content and conversation-order key."""

    hash: str
    content: str
    role: str = "user"
    key: SortKey = ()


@dataclass(frozen=True)
class Ledger:
    """The session's chunk state: whether it exists, and the last chunked message."""

    exists: bool = False
    last_hash: str | None = None
    last_key: SortKey | None = None


@dataclass
class ChunkDecision:
    mode: Mode
    new: int = 0
    tokens: int = 0
    by_tokens: bool = False
    by_messages: bool = False
    chunks: list[list[ChunkMessage]] = field(default_factory=list)
    pending: list[ChunkMessage] = field(default_factory=list)

    @property
    def triggered(self) -> bool:
        return bool(self.chunks)

    @property
    def reason(self) -> str:
        if not self.new:
            return "no new messages outside the lookback"
        pairs = (("tokens", self.by_tokens), ("messages", self.by_messages))
        fired = [name for name, on in pairs if on]
        if not fired:
            return f"{self.new} new messages, ~{self.tokens} tokens: below the thresholds"
        return f"{self.mode} mode, triggered by {' and '.join(fired)}"


def message_hash(episode_id: str, index: int, role: str, content: str) -> str:
    """A message's ledger hash. Its episode and place are part of it, so two identical
    messages ("ok", "thanks") are never mistaken for each other."""
    data = "\x1f".join((episode_id, str(index), role, content)).encode()
    return hashlib.sha256(data).hexdigest()[:32]


def chunk_tokens(messages: Sequence[ChunkMessage]) -> int:
    return estimate_tokens("\n".join(m.content for m in messages))


class _Growing:
    """``chunk_tokens`` of a chunk that grows a message at a time, in O(1) per message (it was
    the whole chunk joined again per message: quadratic in a session's unchunked turns, on
    every add). Exact: the words of the joined text are the sum of each content's words (the
    newline between two is whitespace), its characters theirs plus one newline per join."""

    def __init__(self) -> None:
        self.words = self.chars = self.count = 0

    def add(self, message: ChunkMessage) -> int:
        self.chars += len(message.content) + (1 if self.count else 0)
        self.words += len(message.content.split())
        self.count += 1
        if not self.chars:
            return 0  # estimate_tokens("") (a chunk of one empty message)
        by_words = self.words * WORD_TOKENS
        by_chars = self.chars / CHARS_PER_TOKEN
        return math.ceil(max(by_words, by_chars) * SAFETY_MARGIN)


def new_messages(messages: Sequence[ChunkMessage], ledger: Ledger) -> list[ChunkMessage]:
    """Messages after the last chunked one: found by hash, or (if that message is gone) by
    its key. Without a ledger cursor every message is new."""
    if ledger.last_hash is None:
        return list(messages)
    for position, message in enumerate(messages):
        if message.hash == ledger.last_hash:
            return list(messages[position + 1 :])
    if ledger.last_key is None:
        return []  # the cursor is unknown and cannot be placed: reprocess nothing
    last = ledger.last_key
    return [m for m in messages if m.key > last]


def plan_chunks(
    messages: Sequence[ChunkMessage], ledger: Ledger, config: ChunkConfig
) -> ChunkDecision:
    """Which new messages close chunks now, under ``config``'s rules (see the module doc)."""
    mode: Mode = "standard" if ledger.exists else "consolidation"
    cut = len(messages) - config.lookback_start_turn
    eligible = new_messages(messages[: max(0, cut)], ledger)
    decision = ChunkDecision(mode=mode, new=len(eligible), tokens=chunk_tokens(eligible))
    current: list[ChunkMessage] = []
    size = _Growing()
    for message in eligible:
        current.append(message)
        by_tokens = size.add(message) >= config.chunk_estimated_token_size
        by_messages = mode == "standard" and len(current) >= config.max_messages_between_chunks
        if by_tokens or by_messages:
            decision.by_tokens |= by_tokens
            decision.by_messages |= by_messages
            decision.chunks.append(current)
            current = []
            size = _Growing()
    decision.pending = current
    return decision


def chunk_messages(messages: list[SessionMessage]) -> list[ChunkMessage]:
    """A session's stored messages as the rules see them (hashed by ``message_hash``)."""
    return [
        ChunkMessage(
            hash=message_hash(m.episode_id, m.index, m.role, m.content),
            content=m.content,
            role=m.role,
            key=(m.created_ms, m.seq, m.index),
        )
        for m in messages
    ]


def ledger_of(exists: bool, cursor: ChunkCursor | None) -> Ledger:
    """The rules' view of a session's chunk state (``chunk_state``: exists, cursor)."""
    if cursor is None:
        return Ledger(exists=exists)
    key = (cursor.created_ms, cursor.seq, cursor.index)
    return Ledger(exists=exists, last_hash=cursor.last_hash, last_key=key)
