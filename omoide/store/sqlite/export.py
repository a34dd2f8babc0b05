"""``AdminReads.export_records`` on SQLite: every table as transfer records, from one snapshot.

The export reads on a connection of its own inside one read transaction (WAL: writers go on
meanwhile and are not seen), with each table's cursor fetched ``batch`` rows at a time, so a
large store streams through bounded memory. Record fields: ``omoide.store.ports.transfer``.
"""

from __future__ import annotations

import base64
import json
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from omoide.store.ports.transfer import RECORD_KINDS
from omoide.store.sql import export as sql_export
from omoide.store.sqlite.db import connect
from omoide.store.sqlite.dialect import SQLITE

Record = sql_export.Record


def b64(blob: bytes | None) -> str | None:
    return None if blob is None else base64.b64encode(blob).decode("ascii")


def _loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)


_QUERIES: dict[str, str] = {
    "memory": "SELECT m.user_id, m.scope_id, m.id, s.external_id AS session, m.type, m.text,"
    " m.context, m.metadata, m.valid_from, m.invalid_at, m.supersedes, m.access_count,"
    " m.last_accessed_at, m.created_at, m.updated_at, (SELECT json_group_array(episode_id)"
    " FROM (SELECT episode_id FROM memory_sources WHERE memory_seq = m.seq"
    " ORDER BY episode_id)) AS sources, v.vec AS vector FROM memories m"
    " LEFT JOIN sessions s ON s.id = m.session_id LEFT JOIN memory_vectors v"
    " ON v.memory_seq = m.seq WHERE {m} ORDER BY m.seq",
    "history": "SELECT h.user_id, h.scope_id, h.memory_id, min(h.id) AS first FROM history h"
    " WHERE {h} GROUP BY h.user_id, h.scope_id, h.memory_id ORDER BY first",
    "entity": "SELECT e.user_id, e.scope_id, e.id, e.name, e.type, e.mention_count,"
    " e.confidence, e.source, e.last_seen_at, e.created_at, (SELECT json_group_array(episode_id)"
    " FROM (SELECT episode_id FROM entity_episodes WHERE entity_id = e.id"
    " ORDER BY episode_id)) AS episodes, v.vec AS vector FROM entities e"
    " LEFT JOIN entity_vectors v ON v.entity_id = e.id WHERE {e} ORDER BY e.rowid",
    "job": "SELECT j.id AS _id, j.user_id, j.scope_id, j.kind AS job_kind, j.payload, j.attempts,"
    " j.max_attempts, j.last_error, j.run_after, j.created_at, j.updated_at, j.result"
    " FROM jobs j WHERE {j} AND j.state IN ('pending', 'running') ORDER BY j.id",
}


def _with_json(*keys: str) -> Callable[[sqlite3.Row], Record]:
    def convert(row: sqlite3.Row) -> Record:
        record = dict(row)
        for key in keys:
            record[key] = _loads(record[key])
        return record

    return convert


def _with_vector(*keys: str) -> Callable[[sqlite3.Row], Record]:
    as_json = _with_json(*keys)

    def convert(row: sqlite3.Row) -> Record:
        record = as_json(row)
        record["vector"] = b64(record["vector"])
        return record

    return convert


class _Exporter:
    """One snapshot's conversions that need further reads (history entries, job steps)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def history(self, row: sqlite3.Row) -> Record:
        entries = self.conn.execute(
            "SELECT event, old_text, new_text, actor, created_at FROM history"
            " WHERE memory_id = ? AND user_id = ? AND scope_id = ? ORDER BY id",
            (row["memory_id"], row["user_id"], row["scope_id"]),
        )
        return {
            "user_id": row["user_id"],
            "scope_id": row["scope_id"],
            "memory_id": row["memory_id"],
            "entries": [dict(e) for e in entries],
        }

    def job(self, row: sqlite3.Row) -> Record:
        record = dict(row)
        job_id = record.pop("_id")
        record["payload"] = json.loads(record["payload"])
        record["result"] = _loads(record["result"])
        steps = self.conn.execute(
            "SELECT step, status, detail, calls, prompt_tokens, completion_tokens, created_at"
            " FROM job_steps WHERE job_id = ? ORDER BY created_at, step",
            (job_id,),
        )
        record["steps"] = {s["step"]: {k: s[k] for k in s if k != "step"} for s in steps}
        return record

    def converters(self) -> dict[str, Callable[[sqlite3.Row], Record]]:
        return {
            "memory": _with_vector("metadata", "sources"),
            "history": self.history,
            "entity": _with_vector("episodes"),
            "job": self.job,
        }


def export_records(
    path: Path, user_id: str | None, scope_id: str | None, batch: int, key: str | None = None
) -> Iterator[tuple[str, list[Record]]]:
    """See ``AdminReads.export_records``."""
    conn = connect(path, key)
    try:
        conn.execute("PRAGMA query_only = ON")
        conn.execute("BEGIN")
        templates = {**sql_export.queries(SQLITE, "rowid", chunks_by_tenant=False), **_QUERIES}
        convert = {**sql_export.converters(SQLITE), **_Exporter(conn).converters()}
        for kind in RECORD_KINDS:
            sql, params = sql_export.query(templates[kind], SQLITE, user_id, scope_id)
            cursor = conn.execute(sql, params)
            while rows := cursor.fetchmany(batch):
                yield kind, [convert[kind](row) for row in rows]
    finally:
        conn.close()  # ends the read transaction
