"""How SQLite imports records for the shared ``import_records`` (``store.sql.import_``).

A held key is skipped by ``INSERT OR IGNORE``. The full-text row of a memory follows from its
insert (triggers), the vector cache from the vector rows (``vec_log`` triggers).
"""

from __future__ import annotations

import base64
import json
import sqlite3
import struct
from collections.abc import Sequence

from omoide.errors import Conflict, NotFound
from omoide.store.sql import import_ as sql_import
from omoide.store.sql.import_ import ImportLayout, Record, owned, scope_of
from omoide.store.sqlite import chunks, cipher, rows
from omoide.store.sqlite.dialect import SQLITE
from omoide.store.sqlite.shared import session_pk
from omoide.types import Scope


def _blob(vector: str | list[float] | None) -> bytes | None:
    """float32 bytes of a base64 string (what exports write) or a list of numbers."""
    if vector is None:
        return None
    if isinstance(vector, list):
        return struct.pack(f"<{len(vector)}f", *vector)
    return base64.b64decode(vector, validate=True)


def _episode_link(conn: sqlite3.Connection, scope: Scope, episode_id: str) -> str:
    row = conn.execute(
        "SELECT id FROM episodes WHERE id = ? AND user_id = ? AND scope_id = ?",
        (episode_id, scope.user_id, scope.scope_id),
    ).fetchone()
    if row is None:
        raise NotFound(f"episode {episode_id!r} not found", id=episode_id)
    return str(row[0])


def _memory(conn: sqlite3.Connection, r: Record) -> bool:
    if owned(conn, SQLITE, "memories", r["id"], r):
        return False
    scope = scope_of(r)
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


def _entity(conn: sqlite3.Connection, r: Record) -> bool:
    if owned(conn, SQLITE, "entities", r["id"], r):
        return False
    scope = scope_of(r)
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


def _has_job(conn: sqlite3.Connection, r: Record, payload: str) -> bool:
    """Whether the tenant has a job of this kind with an equal payload, key order ignored:
    reordering keys keeps the length of ``json.dumps``, so only rows of that length compare."""
    candidates = conn.execute(
        "SELECT payload FROM jobs WHERE user_id = ? AND scope_id = ? AND kind = ?"
        " AND length(payload) = ?",
        (r["user_id"], r["scope_id"], r["job_kind"], len(payload)),
    )
    return any(json.loads(row[0]) == r["payload"] for row in candidates)


LAYOUT = ImportLayout(
    held=lambda sql: sql.replace("INSERT INTO", "INSERT OR IGNORE INTO", 1),
    raced=lambda sql: sql,  # one writer: nothing can come between the check and the insert
    flag=int,
    malformed=cipher.IntegrityError,
    job_held=_has_job,
    steps_by_tenant=False,
    own={"memory": _memory, "entity": _entity},
)


def import_records(conn: sqlite3.Connection, kind: str, records: Sequence[Record]) -> list[int]:
    """See ``AdminWrites.import_records``."""
    return sql_import.import_records(conn, SQLITE, LAYOUT, chunks.LAYOUT, kind, records)
