"""``AdminWrites.import_records`` on PostgreSQL: exported records back into rows, as they were.

Each writer inserts one record in the caller's transaction and says whether it did: a record
whose key the store holds already is skipped (the import rule of
``omoide.store.ports.transfer``; ``ON CONFLICT DO NOTHING`` on the key), so importing a file
twice changes nothing. A memory's full-text vector follows its insert (the ``memories_tsv``
trigger, as for every memory write); its vector goes into ``memory_vectors`` in the same
transaction. Public ids are unique across tenants here as in SQLite, although the keys
include ``user_id``: ``_owned`` looks an id up among every tenant's rows (``*_id`` indexes).
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import psycopg

from omoide.errors import Conflict, InvalidInput, NotFound
from omoide.store.ports.transfer import HISTORY_ENTRY_FIELDS, RECORD_FIELDS
from omoide.store.postgres.bulk import segmented
from omoide.store.postgres.db import Conn
from omoide.store.postgres.shared import jsonb, session_pk
from omoide.types import Scope

Record = dict[str, Any]


def _scope(record: Record) -> Scope:
    return Scope(user_id=record["user_id"], scope_id=record["scope_id"])


def _vector(vector: str | list[float] | None) -> np.ndarray | None:
    """float32 values of a base64 string (what exports write) or a list of numbers."""
    if vector is None:
        return None
    if isinstance(vector, list):
        return np.asarray(vector, dtype=np.float32)
    return np.frombuffer(base64.b64decode(vector, validate=True), dtype="<f4").astype(np.float32)


def _owned(conn: Conn, table: str, record_id: str, record: Record) -> bool:
    """Whether ``table`` holds ``record_id`` already; ``Conflict`` if another tenant does."""
    found = conn.execute(  # the record's own tenant first, should another hold it too
        f"SELECT user_id, scope_id FROM {table} WHERE id = %s"
        " ORDER BY (user_id = %s AND scope_id = %s) DESC LIMIT 1",
        (record_id, record["user_id"], record["scope_id"]),
    ).fetchone()
    if found is None:
        return False
    if (found["user_id"], found["scope_id"]) != (record["user_id"], record["scope_id"]):
        raise Conflict(f"{table} id {record_id!r} belongs to another tenant", id=record_id)
    return True


def _link_episodes(conn: Conn, table: str, owner: str, r: Record, episode_ids: list[str]) -> None:
    """Provenance rows to the tenant's episodes; ``NotFound`` for an episode it lacks."""
    for episode_id in dict.fromkeys(episode_ids):
        linked = conn.execute(
            f"INSERT INTO {table} (user_id, {owner}, episode_id) SELECT e.user_id, %s, e.id"
            " FROM episodes e WHERE e.user_id = %s AND e.scope_id = %s AND e.id = %s"
            " ON CONFLICT DO NOTHING RETURNING 1",
            (r["id"], r["user_id"], r["scope_id"], episode_id),
        ).fetchone()
        if linked is None:
            raise NotFound(f"episode {episode_id!r} not found", id=episode_id)


def _inserted(conn: Conn, sql: str, params: Sequence[Any]) -> bool:
    """Run an ``INSERT ... ON CONFLICT DO NOTHING``; whether it wrote its row."""
    return conn.execute(sql, params).rowcount == 1


def _project(conn: Conn, r: Record) -> bool:
    return _inserted(
        conn,
        "INSERT INTO projects (user_id, scope_id, name, description, isolated, colour, icon,"
        " notes, system_prompt, created_at, updated_at)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
        (
            *(r["user_id"], r["scope_id"], r["name"], r["description"], bool(r["isolated"])),
            *(r["colour"], r["icon"], r["notes"], r["system_prompt"]),
            *(r["created_at"], r["updated_at"]),
        ),
    )


def _session(conn: Conn, r: Record) -> bool:
    project = None
    if r["project"] is not None:
        row = conn.execute(
            "SELECT id FROM projects WHERE user_id = %s AND scope_id = %s AND name = %s",
            (r["user_id"], r["scope_id"], r["project"]),
        ).fetchone()
        if row is None:
            raise NotFound(f"project {r['project']!r} not found", id=r["project"])
        project = row["id"]
    return _inserted(
        conn,
        "INSERT INTO sessions (user_id, scope_id, external_id, name, project_id, metadata,"
        " created_at, updated_at) VALUES (%s, %s, %s, %s, %s, %s::jsonb, %s, %s)"
        " ON CONFLICT DO NOTHING",
        (
            *(r["user_id"], r["scope_id"], r["id"], r["name"], project, jsonb(r["metadata"])),
            *(r["created_at"], r["updated_at"]),
        ),
    )


def _episode(conn: Conn, r: Record) -> bool:
    if _owned(conn, "episodes", r["id"], r):
        return False
    return _inserted(  # ON CONFLICT: a concurrent import of the same file wrote it first
        conn,
        "INSERT INTO episodes (id, session_id, user_id, scope_id, messages, created_at,"
        " access_count, last_accessed_at, consolidated_at, consolidation_id)"
        " VALUES (%s, %s, %s, %s, %s::jsonb, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
        (
            *(r["id"], session_pk(conn, _scope(r), r["session"]), r["user_id"], r["scope_id"]),
            *(jsonb(r["messages"]), r["created_at"], r["access_count"]),
            *(r["last_accessed_at"], r["consolidated_at"], r["consolidation_id"]),
        ),
    )


def _memory(conn: Conn, r: Record) -> bool:
    if _owned(conn, "memories", r["id"], r):
        return False
    scope = _scope(r)
    session = session_pk(conn, scope, r["session"]) if r["session"] is not None else None
    written = _inserted(  # the tsv trigger writes the full-text vector and doc_len
        conn,
        "INSERT INTO memories (id, user_id, scope_id, session_id, type, text, context, text_seg,"
        " context_seg, metadata, valid_from, invalid_at, supersedes, access_count,"
        " last_accessed_at, created_at, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s,"
        " %s::jsonb, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
        (
            *(r["id"], r["user_id"], r["scope_id"], session, r["type"], r["text"], r["context"]),
            *(segmented(r["text"]), segmented(r["context"])),
            *(jsonb(r["metadata"]), r["valid_from"], r["invalid_at"], r["supersedes"]),
            *(r["access_count"], r["last_accessed_at"], r["created_at"], r["updated_at"]),
        ),
    )
    if not written:  # a concurrent import of the same record came first
        return False
    _link_episodes(conn, "memory_sources", "memory_id", r, list(r["sources"]))
    if (vec := _vector(r["vector"])) is not None:
        conn.execute(
            "INSERT INTO memory_vectors (user_id, scope_id, memory_id, embedding)"
            " VALUES (%s, %s, %s, %s)",
            (r["user_id"], r["scope_id"], r["id"], vec),
        )
    return True


def _history(conn: Conn, r: Record) -> bool:
    held = conn.execute(
        "SELECT 1 FROM history WHERE user_id = %s AND memory_id = %s AND scope_id = %s LIMIT 1",
        (r["user_id"], r["memory_id"], r["scope_id"]),
    ).fetchone()
    if held is not None:
        return False
    for entry in r["entries"]:
        if set(entry) != set(HISTORY_ENTRY_FIELDS):
            raise InvalidInput(f"history entry fields {sorted(entry)} are not the export's")
        conn.execute(
            "INSERT INTO history (memory_id, user_id, scope_id, event, old_text, new_text, actor,"
            " created_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
            (
                *(r["memory_id"], r["user_id"], r["scope_id"]),
                *tuple(entry[k] for k in HISTORY_ENTRY_FIELDS),
            ),
        )
    return True


def _entity(conn: Conn, r: Record) -> bool:
    if _owned(conn, "entities", r["id"], r):
        return False
    written = _inserted(
        conn,
        "INSERT INTO entities (id, user_id, scope_id, name, type, mention_count, confidence,"
        " source, last_seen_at, created_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
        " ON CONFLICT DO NOTHING",
        (
            *(r["id"], r["user_id"], r["scope_id"], r["name"], r["type"], r["mention_count"]),
            *(float(r["confidence"]), r["source"], r["last_seen_at"], r["created_at"]),
        ),
    )
    if not written:  # the id is new (checked above): the name is held under another id
        raise Conflict(f"entity {r['name']!r} ({r['type']}) exists under another id", id=r["id"])
    _link_episodes(conn, "entity_episodes", "entity_id", r, list(r["episodes"]))
    if (vec := _vector(r["vector"])) is not None:
        conn.execute(
            "INSERT INTO entity_vectors (user_id, scope_id, entity_id, embedding)"
            " VALUES (%s, %s, %s, %s)",
            (r["user_id"], r["scope_id"], r["id"], vec),
        )
    return True


def _relationship(conn: Conn, r: Record) -> bool:
    if _owned(conn, "relationships", r["id"], r):
        return False
    for end in (r["from_id"], r["to_id"]):
        if not _owned(conn, "entities", end, r):
            raise NotFound(f"entity {end!r} not found", id=end)
    return _inserted(
        conn,
        "INSERT INTO relationships (id, user_id, scope_id, from_id, to_id, label, mention_count,"
        " notes, last_seen_at, created_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
        " ON CONFLICT DO NOTHING",
        (
            *(r["id"], r["user_id"], r["scope_id"], r["from_id"], r["to_id"], r["label"]),
            *(r["mention_count"], r["notes"], r["last_seen_at"], r["created_at"]),
        ),
    )


def _chunk_state(conn: Conn, r: Record) -> bool:
    return _inserted(
        conn,
        "INSERT INTO chunk_state (user_id, session_id, created_at) VALUES (%s, %s, %s)"
        " ON CONFLICT DO NOTHING",
        (r["user_id"], session_pk(conn, _scope(r), r["session"]), r["created_at"]),
    )


def _chunk(conn: Conn, r: Record) -> bool:
    scope = _scope(r)
    last = conn.execute(
        "SELECT seq FROM episodes WHERE user_id = %s AND id = %s AND scope_id = %s",
        (scope.user_id, r["last_episode"], scope.scope_id),
    ).fetchone()
    if last is None:
        raise NotFound(f"episode {r['last_episode']!r} not found", id=r["last_episode"])
    return _inserted(
        conn,
        "INSERT INTO chunk_ledger (user_id, session_id, memory_id, last_hash, last_at, last_seq,"
        " last_index, messages, tokens, created_at)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
        (
            *(r["user_id"], session_pk(conn, scope, r["session"]), r["memory_id"]),
            *(r["last_hash"], r["last_at"], last["seq"], r["last_index"], r["messages"]),
            *(r["tokens"], r["created_at"]),
        ),
    )


def _consolidation(conn: Conn, r: Record) -> bool:
    if _owned(conn, "consolidations", r["id"], r):
        return False
    return _inserted(
        conn,
        "INSERT INTO consolidations (id, user_id, scope_id, session_id, summary_id, report,"
        " snapshot, created_at, reverted_at) VALUES (%s, %s, %s, %s, %s, %s::jsonb, %s::jsonb,"
        " %s, %s) ON CONFLICT DO NOTHING",
        (
            *(r["id"], r["user_id"], r["scope_id"], session_pk(conn, _scope(r), r["session"])),
            *(r["summary_id"], jsonb(r["report"]), jsonb(r["snapshot"])),
            *(r["created_at"], r["reverted_at"]),
        ),
    )


def _variable(conn: Conn, r: Record) -> bool:
    return _inserted(
        conn,
        "INSERT INTO variables (user_id, scope_id, name, value, type, updated_at)"
        " VALUES (%s, %s, %s, %s::jsonb, %s, %s) ON CONFLICT DO NOTHING",
        (r["user_id"], r["scope_id"], r["name"], jsonb(r["value"]), r["type"], r["updated_at"]),
    )


def _usage(conn: Conn, r: Record) -> bool:
    return _inserted(
        conn,
        "INSERT INTO token_usage (user_id, scope_id, prompt_tokens, completion_tokens, requests,"
        " updated_at) VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
        (
            *(r["user_id"], r["scope_id"], r["prompt_tokens"], r["completion_tokens"]),
            *(r["requests"], r["updated_at"]),
        ),
    )


def _job(conn: Conn, r: Record) -> bool:
    payload = jsonb(r["payload"])
    held = conn.execute(  # jsonb equality ignores key order, as the import rule asks
        "SELECT 1 FROM jobs WHERE user_id = %s AND scope_id = %s AND kind = %s"
        " AND payload = %s::jsonb LIMIT 1",
        (r["user_id"], r["scope_id"], r["job_kind"], payload),
    ).fetchone()
    if held is not None:
        return False
    result = None if r["result"] is None else jsonb(r["result"])
    row = conn.execute(
        "INSERT INTO jobs (kind, user_id, scope_id, payload, state, attempts, max_attempts,"
        " last_error, run_after, created_at, updated_at, result)"
        " VALUES (%s, %s, %s, %s::jsonb, 'pending', %s, %s, %s, %s, %s, %s, %s::jsonb)"
        " RETURNING id",
        (
            *(r["job_kind"], r["user_id"], r["scope_id"], payload, r["attempts"]),
            *(r["max_attempts"], r["last_error"], r["run_after"], r["created_at"]),
            *(r["updated_at"], result),
        ),
    ).fetchone()
    assert row is not None  # INSERT ... RETURNING returns the row it wrote
    for step, s in r["steps"].items():
        conn.execute(
            "INSERT INTO job_steps (user_id, job_id, step, status, detail, calls, prompt_tokens,"
            " completion_tokens, created_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
            (
                *(r["user_id"], row["id"], step, s["status"], s["detail"], s["calls"]),
                *(s["prompt_tokens"], s["completion_tokens"], s["created_at"]),
            ),
        )
    return True


def _object(value: Any) -> dict[str, Any]:
    """A JSON object field (schedule settings, scope config): the readers return it as a dict."""
    if not isinstance(value, dict):
        raise InvalidInput(f"expected a JSON object, got {type(value).__name__}")
    return value


def _schedule(conn: Conn, r: Record) -> bool:
    return _inserted(  # last_job_id stays unset: job ids do not travel (see the port)
        conn,
        "INSERT INTO dreaming_schedules (user_id, scope_id, enabled, interval_ms, next_run_at,"
        " settings, last_run_at, sweeps, created_at, updated_at)"
        " VALUES (%s, %s, %s, %s, %s, %s::jsonb, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
        (
            *(r["user_id"], r["scope_id"], bool(r["enabled"]), r["interval_ms"]),
            *(r["next_run_at"], jsonb(_object(r["settings"])), r["last_run_at"]),
            *(r["sweeps"], r["created_at"], r["updated_at"]),
        ),
    )


def _scope_config(conn: Conn, r: Record) -> bool:
    return _inserted(
        conn,
        "INSERT INTO scope_configs (user_id, scope_id, config, updated_at)"
        " VALUES (%s, %s, %s::jsonb, %s) ON CONFLICT DO NOTHING",
        (r["user_id"], r["scope_id"], jsonb(_object(r["config"])), r["updated_at"]),
    )


_WRITERS: dict[str, Callable[[Conn, Record], bool]] = {
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


def import_records(conn: Conn, kind: str, records: Sequence[Record]) -> list[int]:
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
        except (KeyError, TypeError, ValueError, psycopg.DataError, psycopg.IntegrityError) as exc:
            raise InvalidInput(f"{kind} record {position} is malformed: {exc}") from exc
        if inserted:
            written.append(position)
    return written
