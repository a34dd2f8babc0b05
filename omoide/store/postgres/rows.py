"""Row -> model conversion for PostgreSQL rows (``dict_row``); times are integer ms."""

from __future__ import annotations

from typing import Any

from omoide.store.records import ms_to_dt_required as dt
from omoide.types import (
    MemoryItem,
    MemoryType,
    ms_to_dt,
)

Row = dict[str, Any]

MEMORY_COLUMNS = """
    m.seq, m.id, m.user_id, m.scope_id, s.external_id AS session_ext, m.type, m.text,
    m.metadata, m.valid_from, m.invalid_at, m.supersedes, m.access_count,
    m.last_accessed_at, m.created_at, m.updated_at,
    ARRAY(SELECT ms.episode_id FROM memory_sources ms
          WHERE ms.user_id = m.user_id AND ms.memory_id = m.id ORDER BY ms.episode_id)
        AS sources,
    EXISTS (SELECT 1 FROM memory_vectors v WHERE v.user_id = m.user_id AND v.memory_id = m.id)
        AS embedded
"""
MEMORY_FROM = "memories m LEFT JOIN sessions s ON s.user_id = m.user_id AND s.id = m.session_id"


def memory(row: Row) -> MemoryItem:
    return MemoryItem(
        id=row["id"],
        user_id=row["user_id"],
        scope_id=row["scope_id"],
        session_id=row["session_ext"],
        type=MemoryType(row["type"]),
        text=row["text"],
        metadata=row["metadata"],
        source_episodes=list(row["sources"] or []),
        valid_from=dt(row["valid_from"]),
        invalid_at=ms_to_dt(row["invalid_at"]),
        supersedes=row["supersedes"],
        access_count=row["access_count"],
        last_accessed_at=ms_to_dt(row["last_accessed_at"]),
        created_at=dt(row["created_at"]),
        updated_at=dt(row["updated_at"]),
        embedded=bool(row["embedded"]),
    )
