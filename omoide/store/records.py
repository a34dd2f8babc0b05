"""Row-to-model conversions that read the same on every backend.

Both backends store times as integer milliseconds and name their columns alike, so a history
entry or a relationship reads the same from a ``sqlite3.Row`` as from a psycopg dict row; the
conversions whose columns differ per backend (JSON text or jsonb, ...) stay in each backend.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Protocol

from omoide.types import HistoryEntry, HistoryEvent, MemoryItem, MemoryType, Relationship, ms_to_dt


class RowLike(Protocol):
    """A result row read by column name (``sqlite3.Row``, a psycopg ``dict_row``)."""

    def __getitem__(self, key: str, /) -> Any: ...


def ms_to_dt_required(ms: int) -> datetime:
    """A NOT NULL millisecond column as an aware datetime."""
    return datetime.fromtimestamp(ms / 1000, tz=UTC)


def history(row: RowLike) -> HistoryEntry:
    return HistoryEntry(
        id=row["id"],
        memory_id=row["memory_id"],
        event=HistoryEvent(row["event"]),
        old_text=row["old_text"],
        new_text=row["new_text"],
        actor=row["actor"],
        created_at=ms_to_dt_required(row["created_at"]),
    )


def relationship(row: RowLike) -> Relationship:
    return Relationship(
        id=row["id"],
        user_id=row["user_id"],
        scope_id=row["scope_id"],
        from_id=row["from_id"],
        from_name=row["from_name"],
        to_id=row["to_id"],
        to_name=row["to_name"],
        label=row["label"],
        mention_count=row["mention_count"],
        notes=row["notes"],
        last_seen_at=ms_to_dt_required(row["last_seen_at"]),
        created_at=ms_to_dt_required(row["created_at"]),
    )


def memory(row: RowLike, metadata: dict[str, Any], sources: list[str]) -> MemoryItem:
    """A memory row (``MEMORY_COLUMNS`` of a backend's ``rows``) with its metadata and source
    episode ids as the backend reads them."""
    return MemoryItem(
        id=row["id"],
        user_id=row["user_id"],
        scope_id=row["scope_id"],
        session_id=row["session_ext"],
        type=MemoryType(row["type"]),
        text=row["text"],
        metadata=metadata,
        source_episodes=sources,
        valid_from=ms_to_dt_required(row["valid_from"]),
        invalid_at=ms_to_dt(row["invalid_at"]),
        supersedes=row["supersedes"],
        access_count=row["access_count"],
        last_accessed_at=ms_to_dt(row["last_accessed_at"]),
        created_at=ms_to_dt_required(row["created_at"]),
        updated_at=ms_to_dt_required(row["updated_at"]),
        embedded=bool(row["embedded"]),
    )
