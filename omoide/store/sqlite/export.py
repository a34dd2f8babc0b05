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
from omoide.store.sqlite.db import connect

Record = dict[str, Any]
_TENANT = "(:user IS NULL OR {t}.user_id = :user) AND (:scope IS NULL OR {t}.scope_id = :scope)"


def _where(alias: str) -> str:
    return _TENANT.format(t=alias)


def b64(blob: bytes | None) -> str | None:
    return None if blob is None else base64.b64encode(blob).decode("ascii")


def _loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)


_QUERIES: dict[str, str] = {
    "project": "SELECT p.user_id, p.scope_id, p.name, p.description, p.isolated, p.colour,"
    " p.icon, p.notes, p.system_prompt, p.created_at, p.updated_at FROM projects p"
    f" WHERE {_where('p')} ORDER BY p.id",
    "session": "SELECT s.user_id, s.scope_id, s.external_id AS id, s.name, p.name AS project,"
    " s.metadata, s.created_at, s.updated_at FROM sessions s"
    f" LEFT JOIN projects p ON p.id = s.project_id WHERE {_where('s')} ORDER BY s.id",
    "episode": "SELECT e.user_id, e.scope_id, e.id, s.external_id AS session, e.messages,"
    " e.created_at, e.access_count, e.last_accessed_at, e.consolidated_at, e.consolidation_id"
    f" FROM episodes e JOIN sessions s ON s.id = e.session_id WHERE {_where('e')}"
    " ORDER BY e.rowid",
    "memory": "SELECT m.user_id, m.scope_id, m.id, s.external_id AS session, m.type, m.text,"
    " m.context, m.metadata, m.valid_from, m.invalid_at, m.supersedes, m.access_count,"
    " m.last_accessed_at, m.created_at, m.updated_at, (SELECT json_group_array(episode_id)"
    " FROM (SELECT episode_id FROM memory_sources WHERE memory_seq = m.seq"
    " ORDER BY episode_id)) AS sources, v.vec AS vector FROM memories m"
    " LEFT JOIN sessions s ON s.id = m.session_id LEFT JOIN memory_vectors v"
    f" ON v.memory_seq = m.seq WHERE {_where('m')} ORDER BY m.seq",
    "history": "SELECT h.user_id, h.scope_id, h.memory_id, min(h.id) AS first FROM history h"
    f" WHERE {_where('h')} GROUP BY h.user_id, h.scope_id, h.memory_id ORDER BY first",
    "entity": "SELECT e.user_id, e.scope_id, e.id, e.name, e.type, e.mention_count,"
    " e.confidence, e.source, e.last_seen_at, e.created_at, (SELECT json_group_array(episode_id)"
    " FROM (SELECT episode_id FROM entity_episodes WHERE entity_id = e.id"
    " ORDER BY episode_id)) AS episodes, v.vec AS vector FROM entities e"
    f" LEFT JOIN entity_vectors v ON v.entity_id = e.id WHERE {_where('e')} ORDER BY e.rowid",
    "relationship": "SELECT r.user_id, r.scope_id, r.id, r.from_id, r.to_id, r.label,"
    " r.mention_count, r.notes, r.last_seen_at, r.created_at FROM relationships r"
    f" WHERE {_where('r')} ORDER BY r.rowid",
    "chunk_state": "SELECT s.user_id, s.scope_id, s.external_id AS session, c.created_at"
    f" FROM chunk_state c JOIN sessions s ON s.id = c.session_id WHERE {_where('s')}"
    " ORDER BY c.session_id",
    "chunk": "SELECT s.user_id, s.scope_id, s.external_id AS session, c.memory_id, c.last_hash,"
    " c.last_at, (SELECT e.id FROM episodes e WHERE e.rowid = c.last_seq) AS last_episode,"
    " c.last_index, c.messages, c.tokens, c.created_at FROM chunk_ledger c"
    f" JOIN sessions s ON s.id = c.session_id WHERE {_where('s')} ORDER BY c.id",
    "consolidation": "SELECT c.user_id, c.scope_id, c.id, s.external_id AS session,"
    " c.summary_id, c.report, c.snapshot, c.created_at, c.reverted_at FROM consolidations c"
    f" JOIN sessions s ON s.id = c.session_id WHERE {_where('c')} ORDER BY c.rowid",
    "variable": "SELECT v.user_id, v.scope_id, v.name, v.value, v.type, v.updated_at"
    f" FROM variables v WHERE {_where('v')} ORDER BY v.user_id, v.scope_id, v.name",
    "usage": "SELECT u.user_id, u.scope_id, u.prompt_tokens, u.completion_tokens, u.requests,"
    f" u.updated_at FROM token_usage u WHERE {_where('u')} ORDER BY u.user_id, u.scope_id",
    "job": "SELECT j.id AS _id, j.user_id, j.scope_id, j.kind AS job_kind, j.payload, j.attempts,"
    " j.max_attempts, j.last_error, j.run_after, j.created_at, j.updated_at, j.result"
    f" FROM jobs j WHERE {_where('j')} AND j.state IN ('pending', 'running') ORDER BY j.id",
    "schedule": "SELECT d.user_id, d.scope_id, d.enabled, d.interval_ms, d.next_run_at,"
    " d.settings, d.last_run_at, d.sweeps, d.created_at, d.updated_at FROM dreaming_schedules d"
    f" WHERE {_where('d')} ORDER BY d.user_id, d.scope_id",
    "scope_config": "SELECT c.user_id, c.scope_id, c.config, c.updated_at FROM scope_configs c"
    f" WHERE {_where('c')} ORDER BY c.user_id, c.scope_id",
}


def _plain(row: sqlite3.Row) -> Record:
    return dict(row)


def _project(row: sqlite3.Row) -> Record:
    return {**dict(row), "isolated": bool(row["isolated"])}


def _schedule(row: sqlite3.Row) -> Record:
    return {**dict(row), "enabled": bool(row["enabled"]), "settings": json.loads(row["settings"])}


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
            "project": _project,
            "session": _with_json("metadata"),
            "episode": _with_json("messages"),
            "memory": _with_vector("metadata", "sources"),
            "history": self.history,
            "entity": _with_vector("episodes"),
            "relationship": _plain,
            "chunk_state": _plain,
            "chunk": _plain,
            "consolidation": _with_json("report", "snapshot"),
            "variable": _with_json("value"),
            "usage": _plain,
            "job": self.job,
            "schedule": _schedule,
            "scope_config": _with_json("config"),
        }


def export_records(
    path: Path, user_id: str | None, scope_id: str | None, batch: int, key: str | None = None
) -> Iterator[tuple[str, list[Record]]]:
    """See ``AdminReads.export_records``."""
    conn = connect(path, key)
    try:
        conn.execute("PRAGMA query_only = ON")
        conn.execute("BEGIN")
        exporter = _Exporter(conn)
        convert = exporter.converters()
        params = {"user": user_id, "scope": scope_id}
        for kind in RECORD_KINDS:
            cursor = conn.execute(_QUERIES[kind], params)
            while rows := cursor.fetchmany(batch):
                yield kind, [convert[kind](row) for row in rows]
    finally:
        conn.close()  # ends the read transaction
