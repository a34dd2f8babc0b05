"""Row -> model conversion for PostgreSQL rows (``dict_row``); times are integer ms."""

from __future__ import annotations

import json
from typing import Any

from omoide.store import records
from omoide.types import MemoryItem

Row = dict[str, Any]

_SOURCES = """ARRAY(SELECT ms.episode_id FROM memory_sources ms
    WHERE ms.user_id = m.user_id AND ms.memory_id = m.id ORDER BY ms.episode_id)"""
_FIELDS = {
    **{n: f"m.{n}" for n in ("seq", "id", "user_id", "scope_id")},
    "session_ext": "s.external_id",
    **{n: f"m.{n}" for n in ("type", "text", "metadata", "valid_from", "invalid_at")},
    **{n: f"m.{n}" for n in ("supersedes", "access_count", "last_accessed_at")},
    **{n: f"m.{n}" for n in ("created_at", "updated_at")},
    "sources": _SOURCES,
    "embedded": "EXISTS (SELECT 1 FROM memory_vectors v"
    " WHERE v.user_id = m.user_id AND v.memory_id = m.id)",
}
MEMORY_COLUMNS = ", ".join(f"{sql} AS {name}" for name, sql in _FIELDS.items())
# A search reads ~200 candidates and returns ~10 of them whole: each candidate's row as one
# JSON array, decoded for the hits only, and whether it has a vector from a join the read
# has (``VECTOR_JOIN``: a memory has one vector at most) rather than a probe per row.
ROW_ARRAY = "json_build_array({})::text".format(
    ", ".join({**_FIELDS, "embedded": "v.memory_id IS NOT NULL"}.values())
)
VECTOR_JOIN = " LEFT JOIN memory_vectors v ON v.user_id = m.user_id AND v.memory_id = m.id"
MEMORY_FROM = "memories m LEFT JOIN sessions s ON s.user_id = m.user_id AND s.id = m.session_id"


def memory(row: Row) -> MemoryItem:
    return records.memory(row, row["metadata"], list(row["sources"] or []))


def memory_of_array(text: str) -> MemoryItem:
    """A memory from its ``ROW_ARRAY``: JSON renders the metadata as the jsonb's own text,
    which is what a ``jsonb`` column is decoded from, and the times and counts as integers."""
    row = dict(zip(_FIELDS, json.loads(text), strict=True))
    return records.memory(row, row["metadata"], list(row["sources"] or []))
