"""Batched memory writes on PostgreSQL: one statement per table for a whole batch.

Row-at-a-time writes cost four to five round trips and statement executions per memory
(session lookup, insert, history, re-read, vector), which held the store to ~500 items/s while
SQLite, whose keyword rows are written in bulk before the commit, did ~4,000. Here a batch is
one ``INSERT ... SELECT FROM unnest(...)`` per table (the memories' with their history entries,
in one statement), on the caller's transaction connection, so
the batch still commits (or rolls back) as a whole with its vectors or embed job and history.
Rows are inserted in the order given (``WITH ORDINALITY ... ORDER BY``), so ``seq`` follows the
caller's order exactly as separate inserts would.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import numpy as np

from omoide.errors import NotFound
from omoide.segment import CJK_RUN, segment
from omoide.store.ports.memories import NewMemory
from omoide.store.postgres import rows
from omoide.store.postgres.db import Conn
from omoide.store.postgres.shared import jsonb
from omoide.types import HistoryEvent, MemoryItem, Scope, now_ms

# The memories and their history entries in one statement (one round trip): the history rows
# come from what the insert returned, in its order.
_INSERT = """
WITH m AS (
INSERT INTO memories (id, user_id, scope_id, session_id, type, text, context, text_seg,
    context_seg, metadata, valid_from, supersedes, created_at, updated_at)
SELECT u.id, %s, %s, u.session_id, u.type, u.text, u.context, u.text_seg, u.context_seg,
    u.metadata::jsonb, u.valid_from, u.supersedes, u.created_at, %s
FROM unnest(%s::text[], %s::bigint[], %s::text[], %s::text[], %s::text[], %s::text[],
            %s::text[], %s::text[], %s::bigint[], %s::text[], %s::bigint[]) WITH ORDINALITY
    AS u(id, session_id, type, text, context, text_seg, context_seg, metadata, valid_from,
         supersedes, created_at, ord)
ORDER BY u.ord
RETURNING seq, id, user_id, scope_id, type, text, metadata, valid_from, invalid_at, supersedes,
    access_count, last_accessed_at, created_at, updated_at
), h AS (
INSERT INTO history (memory_id, user_id, scope_id, event, old_text, new_text, actor, created_at)
SELECT m.id, m.user_id, m.scope_id, %s, %s, m.text, %s, %s FROM m ORDER BY m.seq
){vectors}
SELECT * FROM m
"""
# The memories' vectors in the same statement, when the caller has them (an add embeds before
# its transaction): one round trip less than a statement of their own.
_WITH_VECTORS = """, v AS (
INSERT INTO memory_vectors (user_id, scope_id, memory_id, embedding)
SELECT m.user_id, m.scope_id, m.id, u.embedding
FROM m JOIN unnest(%s::text[], %b::vector[]) AS u(memory_id, embedding) ON u.memory_id = m.id
)"""
# Only an episode of the same tenant may back a memory (a foreign key alone would accept
# another scope's episode of the same user): the join keeps the tenant's, the caller checks.
_SOURCES = """
INSERT INTO memory_sources (user_id, memory_id, episode_id)
SELECT e.user_id, p.memory_id, e.id
FROM unnest(%s::text[], %s::text[]) AS p(memory_id, episode_id)
JOIN episodes e ON e.user_id = %s AND e.scope_id = %s AND e.id = p.episode_id
RETURNING memory_id, episode_id
"""
_VECTORS = """
INSERT INTO memory_vectors (user_id, scope_id, memory_id, embedding)
SELECT m.user_id, m.scope_id, m.id, v.embedding
FROM unnest(%s::text[], %b::vector[]) AS v(memory_id, embedding)
JOIN memories m ON m.user_id = %s AND m.scope_id = %s AND m.id = v.memory_id
ON CONFLICT (user_id, memory_id) DO UPDATE SET embedding = excluded.embedding
"""


def segmented(text: str) -> str | None:
    """``text`` for the full-text vector when it holds CJK runs (``omoide.segment``), else None:
    the ``memories_tsv`` trigger then reads the text itself (no copy of plain text is kept)."""
    return segment(text) if CJK_RUN.search(text) else None


def insert_memories(
    conn: Conn,
    scope: Scope,
    news: Sequence[NewMemory],
    actor: str,
    event: HistoryEvent = HistoryEvent.ADD,
    old_text: str | None = None,
    vectors: np.ndarray | None = None,
) -> list[MemoryItem]:
    """Insert ``news`` in order with fresh ids, their source links and one history entry each
    (``event``, ``old_text``), and ``vectors`` (row ``i`` for ``news[i]``) in the same
    statement if given; return them as stored. ``NotFound`` for a session or source episode
    that is not the tenant's (the caller's transaction then rolls back)."""
    if not news:
        return []
    ts = now_ms()
    sessions = _session_pks(conn, scope, {n.session_id for n in news if n.session_id})
    ids = [uuid.uuid4().hex for _ in news]
    created = [n.created_at_ms or ts for n in news]
    columns = (
        ids,
        [sessions[n.session_id] if n.session_id else None for n in news],
        [n.type.value for n in news],
        [n.text for n in news],
        [n.context for n in news],
        [segmented(n.text) for n in news],
        [segmented(n.context) for n in news],
        [jsonb(n.metadata) for n in news],
        [n.valid_from_ms or c for n, c in zip(news, created, strict=True)],
        [n.supersedes for n in news],
        created,
    )
    history = (event.value, old_text, actor, now_ms())
    embedded: tuple[Any, ...] = ()
    if vectors is None:
        sql = _INSERT.replace("{vectors}", "")
    else:
        batch = vectors.astype(np.float32)
        sql = _INSERT.replace("{vectors}", _WITH_VECTORS)
        embedded = (ids, list(batch))
    inserted = conn.execute(
        sql, (scope.user_id, scope.scope_id, ts, *columns, *history, *embedded)
    ).fetchall()
    sources = _link_sources(conn, scope, ids, news)
    # The rows as a read would return them, without reading them again: what the insert
    # returned, with the session ids and sources given and no vector yet.
    by_id = {r["id"]: r for r in inserted}
    return [
        rows.memory(
            {
                **by_id[i],
                "session_ext": new.session_id or None,
                "sources": sorted(sources.get(i, ())),
                "embedded": vectors is not None,
            }
        )
        for i, new in zip(ids, news, strict=True)
    ]


def put_vectors(conn: Conn, scope: Scope, ids: Sequence[str], vectors: np.ndarray) -> int:
    """Store (or replace) the vectors of the tenant's memories ``ids`` (row ``i`` of ``vectors``
    for ``ids[i]``); a memory that is not the tenant's (or is gone) is skipped. The count stored."""
    last = {memory_id: row for row, memory_id in enumerate(ids)}  # one row per memory
    if not last:
        return 0
    batch = vectors.astype(np.float32)
    cursor = conn.execute(
        _VECTORS,
        (list(last), [batch[row] for row in last.values()], scope.user_id, scope.scope_id),
    )
    return cursor.rowcount


def _session_pks(conn: Conn, scope: Scope, session_ids: set[str]) -> dict[str, int]:
    if not session_ids:
        return {}
    found = conn.execute(
        "SELECT external_id, id FROM sessions"
        " WHERE user_id = %s AND scope_id = %s AND external_id = ANY(%s)",
        (scope.user_id, scope.scope_id, sorted(session_ids)),
    ).fetchall()
    pks = {str(r["external_id"]): int(r["id"]) for r in found}
    missing = sorted(session_ids - set(pks))
    if missing:
        raise NotFound(f"session {missing[0]!r} not found", id=missing[0])
    return pks


def _link_sources(
    conn: Conn, scope: Scope, ids: list[str], news: Sequence[NewMemory]
) -> dict[str, set[str]]:
    """Link each memory to its source episodes; the episodes linked, by memory id."""
    pairs = list(
        dict.fromkeys(
            (memory_id, episode_id)
            for memory_id, new in zip(ids, news, strict=True)
            for episode_id in new.source_episodes
        )
    )
    if not pairs:
        return {}
    linked = conn.execute(
        _SOURCES,
        ([p[0] for p in pairs], [p[1] for p in pairs], scope.user_id, scope.scope_id),
    ).fetchall()
    found = {(r["memory_id"], r["episode_id"]) for r in linked}
    for memory_id, episode_id in pairs:
        if (memory_id, episode_id) not in found:
            raise NotFound(f"episode {episode_id!r} not found", id=episode_id)
    by_memory: dict[str, set[str]] = {}
    for memory_id, episode_id in pairs:
        by_memory.setdefault(memory_id, set()).add(episode_id)
    return by_memory
