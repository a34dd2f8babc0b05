"""The value types of an export record's fields, checked before a record reaches the store.

SQLite stores whatever a column is given, so a record with a timestamp that is a string or a
vector of the wrong length would be written as is and break every later read of its tenant
(listing, search). A file is refused at the first such record instead.
"""

from __future__ import annotations

import base64
import binascii
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from omoide.errors import InvalidInput
from omoide.types import HistoryEvent, MemoryType, Message, dt_to_ms
from omoide.validate import MAX_DEPTH, check_ids, describe_location, find_invalid

# Whole numbers wherever they appear (``messages`` is a count only in a chunk record).
_INTEGERS = frozenset(
    {
        *("access_count", "mention_count", "attempts", "max_attempts", "prompt_tokens"),
        *("completion_tokens", "requests", "sweeps", "interval_ms", "tokens", "last_index"),
        *("valid_from", "run_after"),
    }
)
_STRINGS = frozenset({"user_id", "scope_id"})
# Times besides the ``*_at`` fields, in milliseconds since the epoch. A read turns each into a
# datetime, which ends at year 9999: past it (an in-range SQLite integer) every later listing
# and search of the tenant failed ("year ... is out of range").
_TIMES = frozenset({"valid_from", "run_after"})
_MIN_MS = dt_to_ms(datetime.min.replace(tzinfo=UTC))
_MAX_MS = dt_to_ms(datetime.max.replace(tzinfo=UTC))
_STRING_IDS = frozenset({"memory", "entity", "episode", "consolidation", "relationship"})


# A record nests deeper than what it holds (a consolidation's snapshot holds rows holding
# metadata), so the whole record may go deeper than one request; metadata may not.
_RECORD_DEPTH = 4 * MAX_DEPTH
_METADATA = frozenset({"memory", "session"})


def check_record(kind: str, record: dict[str, Any], line: int, dim: int | None) -> None:
    """``InvalidInput`` naming ``line`` if a field holds a value of the wrong type, a string no
    request could store (NUL, a lone surrogate) or a number outside SQLite's, or a vector is
    not ``dim`` float32 values (when the file names its embedding). What a read turns back
    into a memory, session or episode has that model's types: written as they were, they
    broke every later listing and search of the tenant."""
    found = find_invalid(record, max_depth=_RECORD_DEPTH)
    if found is not None:
        where, unstorable = found
        at = describe_location("", where)
        raise InvalidInput(f"line {line}: {kind} field {at}: {unstorable}")
    for name, value in record.items():
        problem = _problem(kind, name, value, dim)
        if problem is not None:
            raise InvalidInput(f"line {line}: {kind} field {name!r} {problem}")
    check_ids(record.get("user_id"), record.get("scope_id"))


def _problem(kind: str, name: str, value: Any, dim: int | None) -> str | None:
    if name in _STRINGS or (name == "id" and kind in _STRING_IDS):
        return None if isinstance(value, str) else "must be a string"
    modelled = _model_problem(kind, name, value)
    if modelled is not None:
        return None if modelled == "" else modelled
    if value is None:
        return None  # whether a field may be null is the store's NOT NULL constraints' call
    time = name.endswith("_at") or name in _TIMES
    whole = name in _INTEGERS or time or (kind == "chunk" and name == "messages")
    if whole and (isinstance(value, bool) or not isinstance(value, int)):
        return "must be a whole number"
    if time and not _MIN_MS <= value <= _MAX_MS:
        return f"must be milliseconds between {_MIN_MS} and {_MAX_MS} (years 1 to 9999)"
    if name == "confidence" and (isinstance(value, bool) or not isinstance(value, int | float)):
        return "must be a number"
    if name == "vector":
        return _vector_problem(value, dim)
    return None


def _model_problem(kind: str, name: str, value: Any) -> str | None:
    """For a field a read turns into a model's: its problem, ``""`` if it has none, or None
    when the field is no such one."""
    if name == "metadata" and kind in _METADATA:
        return _metadata_problem(value) or ""
    if kind == "memory" and name == "text":
        return "" if isinstance(value, str) else "must be a string"
    if kind == "memory" and name == "type":
        kinds = [t.value for t in MemoryType]
        return "" if value in kinds else f"must be one of {', '.join(kinds)}"
    if kind == "episode" and name == "messages":
        return _messages_problem(value) or ""
    if kind == "history" and name == "entries":
        return _entries_problem(value) or ""
    if kind == "variable":
        return _variable_problem(name, value)
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


_VARIABLE_TYPES = ("string", "boolean", "integer", "number")


def _variable_problem(name: str, value: Any) -> str | None:
    if name == "name" and not isinstance(value, str):
        return "must be a string"
    if name == "value" and (value is None or isinstance(value, dict | list)):
        return "must be a string, a number or a boolean"
    if name == "type" and value not in _VARIABLE_TYPES:
        return f"must be one of {', '.join(_VARIABLE_TYPES)}"
    return None


def _entries_problem(value: Any) -> str | None:
    """A memory's history entries as a read returns them (``HistoryEntry``): written as they
    were, an unknown event or a time that is no time made the memory's history a 500."""
    if not isinstance(value, list) or not all(isinstance(e, dict) for e in value):
        return "must be a list of history entries"
    events = [e.value for e in HistoryEvent]
    for index, entry in enumerate(value):
        if entry.get("event") not in events:
            problem = f"must be one of {', '.join(events)}"
            return f"entry {index}: event {problem}"
        for name in ("old_text", "new_text", "actor"):
            text = entry.get(name)
            if not (isinstance(text, str) or (text is None and name != "actor")):
                return f"entry {index}: {name} must be a string"
        when = entry.get("created_at")
        late = _problem("history", "created_at", when, None) if when is not None else None
        if when is None or late is not None:
            return f"entry {index}: created_at {late or 'must be a whole number'}"
    return None


def _metadata_problem(value: Any) -> str | None:
    if not isinstance(value, dict):
        return "must be an object"
    found = find_invalid(value)
    return None if found is None else f"{describe_location('', found[0])}: {found[1]}"


def _messages_problem(value: Any) -> str | None:
    if not isinstance(value, list):
        return "must be a list of messages"
    for index, message in enumerate(value):
        try:
            Message.model_validate(message)
        except ValidationError as exc:
            return f"message {index} is invalid: {exc.errors()[0]['msg']}"
    return None
