"""Row -> model conversion for PostgreSQL rows (``dict_row``); times are integer ms."""

from __future__ import annotations

from typing import Any

from omoide.store import records
from omoide.types import MemoryItem

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
    return records.memory(row, row["metadata"], list(row["sources"] or []))
