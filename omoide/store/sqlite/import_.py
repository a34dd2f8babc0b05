"""``AdminWrites.import_records`` on SQLite: exported records back into rows, as they were.

Each writer inserts one record in the caller's transaction and says whether it did: a record
whose key the store holds already is skipped (the import rule of
``omoide.store.ports.transfer``), which is what makes importing a file twice change nothing.
The full-text row of a memory follows from its insert (triggers), the vector cache from the
vector rows (``vec_log`` triggers).
"""

from __future__ import annotations

import base64
import json
import sqlite3
import struct
from collections.abc import Callable, Sequence
from typing import Any

from omoide.errors import Conflict, InvalidInput, NotFound
from omoide.store.ports.transfer import HISTORY_ENTRY_FIELDS, RECORD_FIELDS
from omoide.store.sqlite import cipher, rows
from omoide.store.sqlite.shared import session_pk
from omoide.types import Scope

Record = dict[str, Any]


def _scope(record: Record) -> Scope:
    return Scope(user_id=record["user_id"], scope_id=record["scope_id"])


def _blob(vector: str | list[float] | None) -> bytes | None:
    """float32 bytes of a base64 string (what exports write) or a list of numbers."""
    if vector is None:
        return None
    if isinstance(vector, list):
        return struct.pack(f"<{len(vector)}f", *vector)
    return base64.b64decode(vector, validate=True)


def _owned(conn: sqlite3.Connection, table: str, record_id: str, record: Record) -> bool:
    """Whether ``table`` holds ``record_id`` already; ``Conflict`` if another tenant does."""
    row = conn.execute(f"SELECT user_id, scope_id FROM {table} WHERE id = ?", (record_id,))
    found = row.fetchone()
    if found is None:
        return False
    if (found["user_id"], found["scope_id"]) != (record["user_id"], record["scope_id"]):
        raise Conflict(f"{table} id {record_id!r} belongs to another tenant", id=record_id)
    return True


def _object(value: Any) -> dict[str, Any]:
    """A JSON object field (schedule settings, scope config): the readers return it as a dict."""
    if not isinstance(value, dict):
        raise InvalidInput(f"expected a JSON object, got {type(value).__name__}")
    return value


def _episode_link(conn: sqlite3.Connection, scope: Scope, episode_id: str) -> str:
    row = conn.execute(
        "SELECT id FROM episodes WHERE id = ? AND user_id = ? AND scope_id = ?",
        (episode_id, scope.user_id, scope.scope_id),
    ).fetchone()
    if row is None:
        raise NotFound(f"episode {episode_id!r} not found", id=episode_id)
    return str(row[0])


def _project(conn: sqlite3.Connection, r: Record) -> bool:
    cur = conn.execute(
        "INSERT OR IGNORE INTO projects (user_id, scope_id, name, description, isolated, colour,"
        " icon, notes, system_prompt, created_at, updated_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            *(r["user_id"], r["scope_id"], r["name"], r["description"], int(r["isolated"])),
            *(r["colour"], r["icon"], r["notes"], r["system_prompt"]),
            *(r["created_at"], r["updated_at"]),
        ),
    )
    return cur.rowcount == 1


def _session(conn: sqlite3.Connection, r: Record) -> bool:
    project = None
    if r["project"] is not None:
        row = conn.execute(
            "SELECT id FROM projects WHERE user_id = ? AND scope_id = ? AND name = ?",
            (r["user_id"], r["scope_id"], r["project"]),
        ).fetchone()
        if row is None:
            raise NotFound(f"project {r['project']!r} not found", id=r["project"])
        project = row[0]
    cur = conn.execute(
        "INSERT OR IGNORE INTO sessions (user_id, scope_id, external_id, name, project_id,"
        " metadata, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            r["user_id"],
            r["scope_id"],
            r["id"],
            r["name"],
            project,
            json.dumps(r["metadata"]),
            r["created_at"],
            r["updated_at"],
        ),
    )
    return cur.rowcount == 1


def _episode(conn: sqlite3.Connection, r: Record) -> bool:
    if _owned(conn, "episodes", r["id"], r):
        return False
    conn.execute(
        "INSERT INTO episodes (id, session_id, user_id, scope_id, messages, created_at,"
        " access_count, last_accessed_at, consolidated_at, consolidation_id)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            *(r["id"], session_pk(conn, _scope(r), r["session"]), r["user_id"], r["scope_id"]),
            *(json.dumps(r["messages"]), r["created_at"], r["access_count"]),
            *(r["last_accessed_at"], r["consolidated_at"], r["consolidation_id"]),
        ),
    )
    return True


def _memory(conn: sqlite3.Connection, r: Record) -> bool:
    if _owned(conn, "memories", r["id"], r):
        return False
    scope = _scope(r)
    session = session_pk(conn, scope, r["session"]) if r["session"] is not None else None
    cur = conn.execute(
        "INSERT INTO memories (id, user_id, scope_id, session_id, type, text, context,"
        " tenant_token, metadata, valid_from, invalid_at, supersedes, access_count,"
        " last_accessed_at, created_at, updated_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            *(r["id"], r["user_id"], r["scope_id"], session, r["type"], r["text"], r["context"]),
            *(rows.tenant_token(scope), json.dumps(r["metadata"]), r["valid_from"]),
            *(r["invalid_at"], r["supersedes"], r["access_count"], r["last_accessed_at"]),
            *(r["created_at"], r["updated_at"]),
        ),
    )
    seq = cur.lastrowid
    for episode_id in r["sources"]:
        conn.execute(
            "INSERT OR IGNORE INTO memory_sources (memory_seq, episode_id) VALUES (?, ?)",
            (seq, _episode_link(conn, scope, episode_id)),
        )
    if (vec := _blob(r["vector"])) is not None:
        conn.execute(
            "INSERT INTO memory_vectors (memory_seq, tenant, vec) VALUES (?, ?, ?)",
            (seq, rows.tenant_key(scope), vec),
        )
    return True


def _history(conn: sqlite3.Connection, r: Record) -> bool:
    held = conn.execute(
        "SELECT 1 FROM history WHERE memory_id = ? AND user_id = ? AND scope_id = ? LIMIT 1",
        (r["memory_id"], r["user_id"], r["scope_id"]),
    ).fetchone()
    if held is not None:
        return False
    for entry in r["entries"]:
        if set(entry) != set(HISTORY_ENTRY_FIELDS):
            raise InvalidInput(f"history entry fields {sorted(entry)} are not the export's")
        conn.execute(
            "INSERT INTO history (memory_id, user_id, scope_id, event, old_text, new_text, actor,"
            " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                r["memory_id"],
                r["user_id"],
                r["scope_id"],
                *tuple(entry[k] for k in HISTORY_ENTRY_FIELDS),
            ),
        )
    return True


def _entity(conn: sqlite3.Connection, r: Record) -> bool:
    if _owned(conn, "entities", r["id"], r):
        return False
    scope = _scope(r)
    cur = conn.execute(
        "INSERT OR IGNORE INTO entities (id, user_id, scope_id, name, type, mention_count,"
        " confidence, source, last_seen_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            *(r["id"], r["user_id"], r["scope_id"], r["name"], r["type"], r["mention_count"]),
            *(r["confidence"], r["source"], r["last_seen_at"], r["created_at"]),
        ),
    )
    if cur.rowcount != 1:
        raise Conflict(f"entity {r['name']!r} ({r['type']}) exists under another id", id=r["id"])
    for episode_id in r["episodes"]:
        conn.execute(
            "INSERT OR IGNORE INTO entity_episodes (entity_id, episode_id) VALUES (?, ?)",
            (r["id"], _episode_link(conn, scope, episode_id)),
        )
    if (vec := _blob(r["vector"])) is not None:
        conn.execute(
            "INSERT INTO entity_vectors (entity_id, tenant, vec) VALUES (?, ?, ?)",
            (r["id"], rows.tenant_key(scope), vec),
        )
    return True


def _relationship(conn: sqlite3.Connection, r: Record) -> bool:
    if _owned(conn, "relationships", r["id"], r):
        return False
    for end in (r["from_id"], r["to_id"]):
        if not _owned(conn, "entities", end, r):
            raise NotFound(f"entity {end!r} not found", id=end)
    cur = conn.execute(
        "INSERT OR IGNORE INTO relationships (id, user_id, scope_id, from_id, to_id, label,"
        " mention_count, notes, last_seen_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            *(r["id"], r["user_id"], r["scope_id"], r["from_id"], r["to_id"], r["label"]),
            *(r["mention_count"], r["notes"], r["last_seen_at"], r["created_at"]),
        ),
    )
    return cur.rowcount == 1


def _chunk_state(conn: sqlite3.Connection, r: Record) -> bool:
    cur = conn.execute(
        "INSERT OR IGNORE INTO chunk_state (session_id, created_at) VALUES (?, ?)",
        (session_pk(conn, _scope(r), r["session"]), r["created_at"]),
    )
    return cur.rowcount == 1


def _chunk(conn: sqlite3.Connection, r: Record) -> bool:
    scope = _scope(r)
    last = conn.execute(
        "SELECT rowid FROM episodes WHERE id = ? AND user_id = ? AND scope_id = ?",
        (r["last_episode"], scope.user_id, scope.scope_id),
    ).fetchone()
    if last is None:
        raise NotFound(f"episode {r['last_episode']!r} not found", id=r["last_episode"])
    cur = conn.execute(
        "INSERT OR IGNORE INTO chunk_ledger (session_id, memory_id, last_hash, last_at, last_seq,"
        " last_index, messages, tokens, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            *(session_pk(conn, scope, r["session"]), r["memory_id"], r["last_hash"]),
            *(r["last_at"], last[0], r["last_index"], r["messages"], r["tokens"]),
            r["created_at"],
        ),
    )
    return cur.rowcount == 1


def _consolidation(conn: sqlite3.Connection, r: Record) -> bool:
    if _owned(conn, "consolidations", r["id"], r):
        return False
    conn.execute(
        "INSERT INTO consolidations (id, user_id, scope_id, session_id, summary_id, report,"
        " snapshot, created_at, reverted_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            *(r["id"], r["user_id"], r["scope_id"], session_pk(conn, _scope(r), r["session"])),
            *(r["summary_id"], json.dumps(r["report"]), json.dumps(r["snapshot"])),
            *(r["created_at"], r["reverted_at"]),
        ),
    )
    return True


def _variable(conn: sqlite3.Connection, r: Record) -> bool:
    cur = conn.execute(
        "INSERT OR IGNORE INTO variables (user_id, scope_id, name, value, type, updated_at)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (
            r["user_id"],
            r["scope_id"],
            r["name"],
            json.dumps(r["value"]),
            r["type"],
            r["updated_at"],
        ),
    )
    return cur.rowcount == 1


def _usage(conn: sqlite3.Connection, r: Record) -> bool:
    cur = conn.execute(
        "INSERT OR IGNORE INTO token_usage (user_id, scope_id, prompt_tokens, completion_tokens,"
        " requests, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
        (
            r["user_id"],
            r["scope_id"],
            r["prompt_tokens"],
            r["completion_tokens"],
            r["requests"],
            r["updated_at"],
        ),
    )
    return cur.rowcount == 1


def _has_job(conn: sqlite3.Connection, r: Record, payload: str) -> bool:
    """Whether the tenant has a job of this kind with an equal payload, key order ignored:
    reordering keys keeps the length of ``json.dumps``, so only rows of that length compare."""
    candidates = conn.execute(
        "SELECT payload FROM jobs WHERE user_id = ? AND scope_id = ? AND kind = ?"
        " AND length(payload) = ?",
        (r["user_id"], r["scope_id"], r["job_kind"], len(payload)),
    )
    return any(json.loads(row[0]) == r["payload"] for row in candidates)


def _job(conn: sqlite3.Connection, r: Record) -> bool:
    payload = json.dumps(r["payload"])
    if _has_job(conn, r, payload):
        return False
    result = None if r["result"] is None else json.dumps(r["result"])
    cur = conn.execute(
        "INSERT INTO jobs (kind, user_id, scope_id, payload, state, attempts, max_attempts,"
        " last_error, run_after, created_at, updated_at, result)"
        " VALUES (?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?)",
        (
            *(r["job_kind"], r["user_id"], r["scope_id"], payload, r["attempts"]),
            *(r["max_attempts"], r["last_error"], r["run_after"], r["created_at"]),
            *(r["updated_at"], result),
        ),
    )
    for step, s in r["steps"].items():
        conn.execute(
            "INSERT INTO job_steps (job_id, step, status, detail, calls, prompt_tokens,"
            " completion_tokens, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                cur.lastrowid,
                step,
                s["status"],
                s["detail"],
                s["calls"],
                s["prompt_tokens"],
                s["completion_tokens"],
                s["created_at"],
            ),
        )
    return True


def _schedule(conn: sqlite3.Connection, r: Record) -> bool:
    cur = conn.execute(  # last_job_id stays unset: job ids do not travel (see the port)
        "INSERT OR IGNORE INTO dreaming_schedules (user_id, scope_id, enabled, interval_ms,"
        " next_run_at, settings, last_run_at, sweeps, created_at, updated_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            *(r["user_id"], r["scope_id"], int(bool(r["enabled"])), r["interval_ms"]),
            *(r["next_run_at"], json.dumps(_object(r["settings"])), r["last_run_at"]),
            *(r["sweeps"], r["created_at"], r["updated_at"]),
        ),
    )
    return cur.rowcount == 1


def _scope_config(conn: sqlite3.Connection, r: Record) -> bool:
    cur = conn.execute(
        "INSERT OR IGNORE INTO scope_configs (user_id, scope_id, config, updated_at)"
        " VALUES (?, ?, ?, ?)",
        (r["user_id"], r["scope_id"], json.dumps(_object(r["config"])), r["updated_at"]),
    )
    return cur.rowcount == 1


_WRITERS: dict[str, Callable[[sqlite3.Connection, Record], bool]] = {
    "project": _project,
    "session": _session,
    "episode": _episode,
    "memory": _memory,
    "history": _history,
    "entity": _entity,
    "relationship": _relationship,
    "chunk_state": _chunk_state,
    "chunk": _chunk,
    "consolidation": _consolidation,
    "variable": _variable,
    "usage": _usage,
    "job": _job,
    "schedule": _schedule,
    "scope_config": _scope_config,
}


def import_records(conn: sqlite3.Connection, kind: str, records: Sequence[Record]) -> list[int]:
    """See ``AdminWrites.import_records``."""
    writer = _WRITERS.get(kind)
    if writer is None:
        raise InvalidInput(f"unknown record kind {kind!r}")
    fields = set(RECORD_FIELDS[kind])
    written = []
    for position, record in enumerate(records):
        if not isinstance(record, dict) or set(record) != fields:
            keys = sorted(record) if isinstance(record, dict) else type(record).__name__
            raise InvalidInput(f"{kind} record {position}: fields {keys} are not the export's")
        try:
            inserted = writer(conn, record)
        except cipher.MalformedRecord as exc:
            raise InvalidInput(f"{kind} record {position} is malformed: {exc}") from exc
        if inserted:
            written.append(position)
    return written
