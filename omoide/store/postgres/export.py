"""``AdminReads.export_records`` on PostgreSQL: every table as transfer records, one snapshot.

The export holds one pooled connection inside one ``REPEATABLE READ READ ONLY`` transaction
for the whole iteration (writers go on and are not seen), and reads each kind through a
server-side cursor ``batch`` rows at a time, so a large store streams through bounded memory.
The records are the SQLite backend's, field for field (``omoide.store.ports.transfer``):
insertion order is the identity columns' order (SQLite's rowids), names sort by code point
(``COLLATE "C"``, SQLite's binary collation), per-row lists and job steps are aggregated in
the row's query (``json``, which keeps the built key order), and vectors (pgvector's float4)
are written as the same little-endian float32 bytes SQLite holds.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from omoide.store.ports.transfer import RECORD_KINDS
from omoide.store.postgres.db import Database

Record = dict[str, Any]
_C = 'COLLATE "C"'


def _sorted_ids(table: str, column: str, owner: str, alias: str) -> str:
    return (
        f"ARRAY(SELECT x.episode_id FROM {table} x WHERE x.user_id = {alias}.user_id"
        f" AND x.{owner} = {alias}.id ORDER BY x.episode_id {_C})"
    ) + f" AS {column}"


# Each query ends in its WHERE clause's tenant condition ``{where}`` and its order.
_QUERIES: dict[str, str] = {
    "project": "SELECT p.user_id, p.scope_id, p.name, p.description, p.isolated, p.colour,"
    " p.icon, p.notes, p.system_prompt, p.created_at, p.updated_at FROM projects p"
    " WHERE {p} ORDER BY p.id",
    "session": "SELECT s.user_id, s.scope_id, s.external_id AS id, s.name, p.name AS project,"
    " s.metadata, s.created_at, s.updated_at FROM sessions s LEFT JOIN projects p"
    " ON p.user_id = s.user_id AND p.id = s.project_id WHERE {s} ORDER BY s.id",
    "episode": "SELECT e.user_id, e.scope_id, e.id, s.external_id AS session, e.messages,"
    " e.created_at, e.access_count, e.last_accessed_at, e.consolidated_at, e.consolidation_id"
    " FROM episodes e JOIN sessions s ON s.user_id = e.user_id AND s.id = e.session_id"
    " WHERE {e} ORDER BY e.seq",
    "memory": "SELECT m.user_id, m.scope_id, m.id, s.external_id AS session, m.type, m.text,"
    " m.context, m.metadata, m.valid_from, m.invalid_at, m.supersedes, m.access_count,"
    " m.last_accessed_at, m.created_at, m.updated_at, "
    + _sorted_ids("memory_sources", "sources", "memory_id", "m")
    + ", v.embedding AS vector FROM memories m LEFT JOIN sessions s"
    " ON s.user_id = m.user_id AND s.id = m.session_id LEFT JOIN memory_vectors v"
    " ON v.user_id = m.user_id AND v.memory_id = m.id WHERE {m} ORDER BY m.seq",
    "history": "SELECT h.user_id, h.scope_id, h.memory_id, json_agg(json_build_object("
    "'event', h.event, 'old_text', h.old_text, 'new_text', h.new_text, 'actor', h.actor,"
    " 'created_at', h.created_at) ORDER BY h.id) AS entries FROM history h WHERE {h}"
    " GROUP BY h.user_id, h.scope_id, h.memory_id ORDER BY min(h.id)",
    "entity": "SELECT e.user_id, e.scope_id, e.id, e.name, e.type, e.mention_count,"
    " e.confidence, e.source, e.last_seen_at, e.created_at, "
    + _sorted_ids("entity_episodes", "episodes", "entity_id", "e")
    + ", v.embedding AS vector FROM entities e LEFT JOIN entity_vectors v"
    " ON v.user_id = e.user_id AND v.entity_id = e.id WHERE {e} ORDER BY e.seq",
    "relationship": "SELECT r.user_id, r.scope_id, r.id, r.from_id, r.to_id, r.label,"
    " r.mention_count, r.notes, r.last_seen_at, r.created_at FROM relationships r"
    " WHERE {r} ORDER BY r.seq",
    "chunk_state": "SELECT s.user_id, s.scope_id, s.external_id AS session, c.created_at"
    " FROM chunk_state c JOIN sessions s ON s.user_id = c.user_id AND s.id = c.session_id"
    " WHERE {s} ORDER BY c.session_id",
    "chunk": "SELECT s.user_id, s.scope_id, s.external_id AS session, c.memory_id, c.last_hash,"
    " c.last_at, (SELECT e.id FROM episodes e WHERE e.user_id = c.user_id"
    " AND e.seq = c.last_seq) AS last_episode, c.last_index, c.messages, c.tokens,"
    " c.created_at FROM chunk_ledger c JOIN sessions s ON s.user_id = c.user_id"
    " AND s.id = c.session_id WHERE {s} ORDER BY c.id",
    "consolidation": "SELECT c.user_id, c.scope_id, c.id, s.external_id AS session,"
    " c.summary_id, c.report, c.snapshot, c.created_at, c.reverted_at FROM consolidations c"
    " JOIN sessions s ON s.user_id = c.user_id AND s.id = c.session_id WHERE {c}"
    " ORDER BY c.seq",
    "variable": "SELECT v.user_id, v.scope_id, v.name, v.value, v.type, v.updated_at"
    f" FROM variables v WHERE {{v}} ORDER BY v.user_id {_C}, v.scope_id {_C}, v.name {_C}",
    "usage": "SELECT u.user_id, u.scope_id, u.prompt_tokens, u.completion_tokens, u.requests,"
    f" u.updated_at FROM token_usage u WHERE {{u}} ORDER BY u.user_id {_C}, u.scope_id {_C}",
    "job": "SELECT j.user_id, j.scope_id, j.kind AS job_kind, j.payload, j.attempts,"
    " j.max_attempts, j.last_error, j.run_after, j.created_at, j.updated_at, j.result,"
    " coalesce((SELECT json_object_agg(st.step, json_build_object('status', st.status,"
    " 'detail', st.detail, 'calls', st.calls, 'prompt_tokens', st.prompt_tokens,"
    " 'completion_tokens', st.completion_tokens, 'created_at', st.created_at)"
    f" ORDER BY st.created_at, st.step {_C}) FROM job_steps st WHERE st.user_id = j.user_id"
    " AND st.job_id = j.id), '{{}}'::json) AS steps FROM jobs j"
    " WHERE {j} AND j.state IN ('pending', 'running') ORDER BY j.id",
    "schedule": "SELECT d.user_id, d.scope_id, d.enabled, d.interval_ms, d.next_run_at,"
    " d.settings, d.last_run_at, d.sweeps, d.created_at, d.updated_at FROM dreaming_schedules d"
    f" WHERE {{d}} ORDER BY d.user_id {_C}, d.scope_id {_C}",
    "scope_config": "SELECT c.user_id, c.scope_id, c.config, c.updated_at FROM scope_configs c"
    f" WHERE {{c}} ORDER BY c.user_id {_C}, c.scope_id {_C}",
}


def b64(vector: Any) -> str | None:
    """A vector (numpy, or pgvector's ``Vector``, which a server-side cursor's binary rows
    load as) as base64 of its little-endian float32 bytes (SQLite's stored form)."""
    if vector is None:
        return None
    values = vector.to_numpy() if hasattr(vector, "to_numpy") else vector
    return base64.b64encode(np.asarray(values, dtype="<f4").tobytes()).decode("ascii")


def _tenant(alias: str, user_id: str | None, scope_id: str | None) -> str:
    """The selection as a condition on ``alias`` (named parameters ``user``/``scope``)."""
    parts = ["true"]
    if user_id is not None:
        parts.append(f"{alias}.user_id = %(user)s")
    if scope_id is not None:
        parts.append(f"{alias}.scope_id = %(scope)s")
    return " AND ".join(parts)


def _query(kind: str, user_id: str | None, scope_id: str | None) -> str:
    template = _QUERIES[kind]
    aliases = {a: _tenant(a, user_id, scope_id) for a in "cdehjmprsuv"}
    return template.format(**aliases)


def _plain(row: Record) -> Record:
    return row


def _with_vector(row: Record) -> Record:
    row["vector"] = b64(row["vector"])
    return row


_CONVERT: dict[str, Callable[[Record], Record]] = {"memory": _with_vector, "entity": _with_vector}


def export_records(
    db: Database, user_id: str | None, scope_id: str | None, batch: int
) -> Iterator[tuple[str, list[Record]]]:
    """See ``AdminReads.export_records``; a generator, so the snapshot starts at the first
    ``next()`` and closing it early ends the read transaction and returns the connection."""
    params = {"user": user_id, "scope": scope_id}
    with db.read() as conn:
        for kind in RECORD_KINDS:
            convert = _CONVERT.get(kind, _plain)
            with conn.cursor(name=f"export_{kind}") as cursor:
                cursor.execute(_query(kind, user_id, scope_id), params)
                while rows := cursor.fetchmany(batch):
                    yield kind, [convert(dict(row)) for row in rows]
