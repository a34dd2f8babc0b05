"""omoide's models as mem0's dicts, and mem0's tenant arguments as omoide's.

mem0 names a memory's owner with up to three ids: ``user_id``, ``agent_id`` and ``run_id``.
omoide's tenant is ``(user_id, scope_id)`` and a conversation is a session, so ``agent_id``
is the scope and ``run_id`` the session; an omitted id is omoide's ``"default"``. As in mem0,
every call that names an owner needs at least one of the three ids.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from omoide.errors import InvalidInput
from omoide.types import (
    DEFAULT_ID,
    HistoryEntry,
    HistoryEvent,
    MemoryItem,
    SearchFilters,
    SearchHit,
)

_ID_KEYS = ("user_id", "agent_id", "run_id")
# mem0's filter operators (``{"AND": [...]}``, ``{"created_at": {"gte": ...}}``) have no
# equivalent in omoide's equality filters; refusing them beats silently matching more.
_OPERATORS = frozenset({"AND", "OR", "NOT"})
# mem0's wildcard: a filter value of "*" matches any value of that key.
WILDCARD = "*"
# Keys mem0 keeps beside ``metadata`` in a memory's dict (not inside it): the message's role
# and its author (``actor_id``, the message's ``name``).
PROMOTED = ("role", "actor_id")
_METADATA_PREFIX = "metadata."


@dataclass(frozen=True)
class Owner:
    """Where a mem0 call reads or writes: omoide's tenant and, for ``run_id``, a session."""

    user_id: str = DEFAULT_ID
    scope_id: str = DEFAULT_ID
    session_id: str | None = None


# mem0's words (ValueError there, InvalidInput, also a ValueError, here).
NO_OWNER = (
    "filters must contain at least one of: user_id, agent_id, run_id. "
    "Example: filters={'user_id': 'u1'}"
)


def owner(user_id: str | None, agent_id: str | None, run_id: str | None) -> Owner:
    """The owner the ids name; none of them is an error, as in mem0 (no call falls back to
    the ``default`` user unasked)."""
    if user_id is None and agent_id is None and run_id is None:
        raise InvalidInput(NO_OWNER, field="filters")
    for name, value in (("user_id", user_id), ("agent_id", agent_id), ("run_id", run_id)):
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise InvalidInput(f"{name}: expected a non-empty string, got {value!r}", field=name)
    # mem0 trims the ids: " alice " is alice, not another tenant with spaces in its name
    user_id, agent_id, run_id = (v.strip() if v else v for v in (user_id, agent_id, run_id))
    return Owner(user_id or DEFAULT_ID, agent_id or DEFAULT_ID, run_id)


def split_filters(
    filters: Mapping[str, Any] | None,
    user_id: str | None,
    agent_id: str | None,
    run_id: str | None,
) -> tuple[Owner, SearchFilters]:
    """mem0's ``filters`` dict: its ids name the owner (an explicit argument wins), every
    other key is a metadata equality, as in mem0."""
    if filters is not None and not isinstance(filters, Mapping):
        raise InvalidInput(f"filters: expected a dict, got {type(filters).__name__}")
    given = dict(filters or {})
    # an explicit argument wins, and means what the same id in ``filters`` means: mem0 moves
    # it into the filters, so run_id="*" is the wildcard there too (it named a run "*")
    explicit = {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}
    named = {k: given.pop(k, None) for k in _ID_KEYS}
    ids = {k: explicit[k] or named[k] for k in _ID_KEYS}
    if ids["run_id"] == WILDCARD:  # mem0's wildcard: any run of the owner, no session narrowing
        ids["run_id"] = None
    metadata: dict[str, Any] = {}
    for key, value in [*given.items(), *((k, v) for k, v in ids.items() if v == WILDCARD)]:
        # a wildcard on a metadata key (any value) or on the user or agent (every tenant's
        # memories) has no omoide equivalent; refusing it beats matching nothing silently
        if key in _OPERATORS or isinstance(value, Mapping | list) or value == WILDCARD:
            raise InvalidInput(
                f"filters: {key!r} uses a filter operator; only equality on metadata keys"
                " (and user_id, agent_id, run_id, with run_id '*' for any run) is supported",
                field="filters",
            )
        metadata[_metadata_key(key)] = value
    who = owner(ids["user_id"], ids["agent_id"], ids["run_id"])
    return who, SearchFilters(session_id=who.session_id, metadata=metadata or None)


def _metadata_key(key: str) -> str:
    """A filter key as a metadata key: mem0's docs ("Working with Metadata") also write
    ``"metadata.category"`` for ``category``. A longer path reaches into a nested value, which
    omoide's equality filters cannot; refused rather than matched against nothing."""
    if not isinstance(key, str) or not key.startswith(_METADATA_PREFIX):
        return key
    inner = key.removeprefix(_METADATA_PREFIX)
    if not inner or "." in inner:
        raise InvalidInput(
            f"filters: {key!r} is a nested metadata path; only top-level metadata keys"
            " ('category' or 'metadata.category') are supported",
            field="filters",
        )
    return inner


def memory_dict(item: MemoryItem, score: float | None = None) -> dict[str, Any]:
    """A memory as mem0 returns it from ``get`` / ``get_all`` / ``search``."""
    out: dict[str, Any] = {
        "id": item.id,
        "memory": item.text,
        # mem0's hash: the MD5 of the text, which it keeps to notice an unchanged memory
        "hash": hashlib.md5(item.text.encode()).hexdigest(),
        "metadata": {k: v for k, v in item.metadata.items() if k not in PROMOTED},
        "created_at": item.created_at.isoformat(),
        "updated_at": item.updated_at.isoformat(),
        "user_id": item.user_id,
    }
    if item.scope_id != DEFAULT_ID:
        out["agent_id"] = item.scope_id
    if item.session_id:
        out["run_id"] = item.session_id
    for key in PROMOTED:
        if value := item.metadata.get(key):
            out[key] = value
    if score is not None:
        out["score"] = score
    return out


def score_details(hit: SearchHit, threshold: float | None) -> dict[str, Any]:
    """mem0's ``explain=True`` details of a hit's score, under mem0's names where omoide has the
    same evidence: ``semantic_score`` (the cosine), ``bm25_score`` (the keyword signal's raw
    score), ``final_score`` and ``threshold``; ``None`` for a signal that did not see the hit.
    omoide's score is no sum of those (a calibrated estimate from the hit's own evidence), so
    mem0's ``raw_score`` and ``max_possible_score`` have no counterpart; ``signals`` is every
    signal the scorer read, by name (``SearchHit.signals``)."""
    semantic = hit.signals.get("vector") or hit.signals.get("cosine")
    keyword = hit.signals.get("keyword")
    return {
        "semantic_score": semantic.score if semantic else None,
        "bm25_score": keyword.score if keyword else None,
        "final_score": hit.score,
        "threshold": threshold,
        "signals": {name: s.model_dump() for name, s in hit.signals.items()},
    }


def added_dict(item: MemoryItem) -> dict[str, Any]:
    """One ``add`` result: mem0's ``{"id", "memory", "event"}`` plus the rest; a new version
    of a fact (it supersedes the old one, which stays in its history) is mem0's UPDATE."""
    return {**memory_dict(item), "event": "UPDATE" if item.supersedes else "ADD"}


def history_dict(
    entry: HistoryEntry, role: str | None = None, actor_id: str | None = None
) -> dict[str, Any]:
    """One history entry in mem0's words and keys (``old_memory``, ``new_memory``,
    ``is_deleted``, ...). mem0 sets ``updated_at`` on the entries that change a memory (UPDATE,
    DELETE), not on its ADD; ``role`` and ``actor_id`` are the memory's message role and
    author, when it has them (omoide's own ``actor``, the door that wrote, means nothing to a
    mem0 caller). mem0's entry ids are strings (uuids)."""
    when = entry.created_at.isoformat()
    return {
        "id": str(entry.id),
        "memory_id": entry.memory_id,
        "old_memory": entry.old_text,
        "new_memory": entry.new_text,
        "event": entry.event.value,
        "created_at": when,
        "updated_at": None if entry.event is HistoryEvent.ADD else when,
        "is_deleted": entry.event is HistoryEvent.DELETE,
        "actor_id": actor_id,
        "role": role,
    }
