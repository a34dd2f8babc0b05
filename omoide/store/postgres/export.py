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
from omoide.store.postgres.dialect import POSTGRES
from omoide.store.sql import export as sql_export

Record = sql_export.Record
_C = 'COLLATE "C"'


def _sorted_ids(table: str, column: str, owner: str, alias: str) -> str:
    return (
        f"ARRAY(SELECT x.episode_id FROM {table} x WHERE x.user_id = {alias}.user_id"
        f" AND x.{owner} = {alias}.id ORDER BY x.episode_id {_C})"
    ) + f" AS {column}"


# Each query ends in its WHERE clause's tenant condition ``{alias}`` and its order.
_QUERIES: dict[str, str] = {
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
    "job": "SELECT j.user_id, j.scope_id, j.kind AS job_kind, j.payload, j.attempts,"
    " j.max_attempts, j.last_error, j.run_after, j.created_at, j.updated_at, j.result,"
    " coalesce((SELECT json_object_agg(st.step, json_build_object('status', st.status,"
    " 'detail', st.detail, 'calls', st.calls, 'prompt_tokens', st.prompt_tokens,"
    " 'completion_tokens', st.completion_tokens, 'created_at', st.created_at)"
    f" ORDER BY st.created_at, st.step {_C}) FROM job_steps st WHERE st.user_id = j.user_id"
    " AND st.job_id = j.id), '{}'::json) AS steps FROM jobs j"
    " WHERE {j} AND j.state IN ('pending', 'running') ORDER BY j.id",
}


def b64(vector: Any) -> str | None:
    """A vector (numpy, or pgvector's ``Vector``, which a server-side cursor's binary rows
    load as) as base64 of its little-endian float32 bytes (SQLite's stored form)."""
    if vector is None:
        return None
    values = vector.to_numpy() if hasattr(vector, "to_numpy") else vector
    return base64.b64encode(np.asarray(values, dtype="<f4").tobytes()).decode("ascii")


def _with_vector(row: Record) -> Record:
    row["vector"] = b64(row["vector"])
    return row


_CONVERT: dict[str, Callable[[Any], Record]] = {
    "memory": _with_vector,
    "history": dict,
    "entity": _with_vector,
    "job": dict,
}


def export_records(
    db: Database, user_id: str | None, scope_id: str | None, batch: int
) -> Iterator[tuple[str, list[Record]]]:
    """See ``AdminReads.export_records``; a generator, so the snapshot starts at the first
    ``next()`` and closing it early ends the read transaction and returns the connection."""
    templates = {**sql_export.queries(POSTGRES, "seq", chunks_by_tenant=True), **_QUERIES}
    convert = {**sql_export.converters(POSTGRES), **_CONVERT}
    with db.read() as conn:
        for kind in RECORD_KINDS:
            sql, params = sql_export.query(templates[kind], POSTGRES, user_id, scope_id)
            with conn.cursor(name=f"export_{kind}") as cursor:
                cursor.execute(sql, params)
                while rows := cursor.fetchmany(batch):
                    yield kind, [convert[kind](dict(row)) for row in rows]
