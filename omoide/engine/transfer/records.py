"""The value types of an export record's fields, checked before a record reaches the store.

SQLite stores whatever a column is given, so a record with a timestamp that is a string or a
vector of the wrong length would be written as is and break every later read of its tenant
(listing, search). A file is refused at the first such record instead.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from omoide.errors import InvalidInput
from omoide.validate import check_ids

# Whole numbers wherever they appear (``messages`` is a count only in a chunk record).
_INTEGERS = frozenset(
    {
        *("access_count", "mention_count", "attempts", "max_attempts", "prompt_tokens"),
        *("completion_tokens", "requests", "sweeps", "interval_ms", "tokens", "last_index"),
        *("valid_from", "run_after"),
    }
)
_STRINGS = frozenset({"user_id", "scope_id"})
_STRING_IDS = frozenset({"memory", "entity", "episode", "consolidation", "relationship"})


def check_record(kind: str, record: dict[str, Any], line: int, dim: int | None) -> None:
    """``InvalidInput`` naming ``line`` if a field holds a value of the wrong type, or a vector
    is not ``dim`` float32 values (when the file names its embedding)."""
    for name, value in record.items():
        problem = _problem(kind, name, value, dim)
        if problem is not None:
            raise InvalidInput(f"line {line}: {kind} field {name!r} {problem}")
    check_ids(record.get("user_id"), record.get("scope_id"))


def _problem(kind: str, name: str, value: Any, dim: int | None) -> str | None:
    if name in _STRINGS or (name == "id" and kind in _STRING_IDS):
        return None if isinstance(value, str) else "must be a string"
    if value is None:
        return None  # whether a field may be null is the store's NOT NULL constraints' call
    whole = name in _INTEGERS or name.endswith("_at") or (kind == "chunk" and name == "messages")
    if whole and (isinstance(value, bool) or not isinstance(value, int)):
        return "must be a whole number"
    if name == "confidence" and (isinstance(value, bool) or not isinstance(value, int | float)):
        return "must be a number"
    if name == "vector":
        return _vector_problem(value, dim)
    return None


def _vector_problem(value: Any, dim: int | None) -> str | None:
    if not isinstance(value, str):
        return "must be base64 text"
    try:
        size = len(base64.b64decode(value, validate=True))
    except (binascii.Error, ValueError):
        return "is not base64"
    if dim is not None and size != 4 * dim:
        return f"holds {size} bytes, not {dim} float32 values"
    return None
