"""How PostgreSQL imports records for the shared ``import_records`` (``store.sql.import_``).

A held key is skipped by ``ON CONFLICT DO NOTHING``. A memory's full-text vector follows its
insert (the ``memories_tsv`` trigger, as for every memory write); its vector goes into
``memory_vectors`` in the same transaction. Public ids are unique across tenants here as in
SQLite, although the keys include ``user_id``: ``owned`` looks an id up among every tenant's rows
(``*_id`` indexes).
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

import numpy as np
import psycopg

from omoide.errors import Conflict, NotFound
from omoide.store.postgres import chunks
from omoide.store.postgres.bulk import segmented
from omoide.store.postgres.db import Conn
from omoide.store.postgres.dialect import POSTGRES
from omoide.store.postgres.shared import jsonb, session_pk
from omoide.store.sql import import_ as sql_import
from omoide.store.sql.import_ import ImportLayout, Record, owned, scope_of


def _vector(vector: str | list[float] | None) -> np.ndarray | None:
    """float32 values of a base64 string (what exports write) or a list of numbers."""
    if vector is None:
        return None
    if isinstance(vector, list):
        return np.asarray(vector, dtype=np.float32)
    return np.frombuffer(base64.b64decode(vector, validate=True), dtype="<f4").astype(np.float32)


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


def _memory(conn: Conn, r: Record) -> bool:
    if owned(conn, POSTGRES, "memories", r["id"], r):
        return False
    scope = scope_of(r)
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


def _entity(conn: Conn, r: Record) -> bool:
    if owned(conn, POSTGRES, "entities", r["id"], r):
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


def _job_held(conn: Conn, r: Record, payload: str) -> bool:
    held = conn.execute(  # jsonb equality ignores key order, as the import rule asks
        "SELECT 1 FROM jobs WHERE user_id = %s AND scope_id = %s AND kind = %s"
        " AND payload = %s::jsonb LIMIT 1",
        (r["user_id"], r["scope_id"], r["job_kind"], payload),
    ).fetchone()
    return held is not None


def _ignoring(sql: str) -> str:
    return sql + " ON CONFLICT DO NOTHING"


LAYOUT = ImportLayout(
    held=_ignoring,
    raced=_ignoring,  # a concurrent import of the same file may have written it first
    flag=bool,
    malformed=(psycopg.DataError, psycopg.IntegrityError),
    job_held=_job_held,
    steps_by_tenant=True,
    own={"memory": _memory, "entity": _entity},
)


def import_records(conn: Conn, kind: str, records: Sequence[Record]) -> list[int]:
    """See ``AdminWrites.import_records``."""
    return sql_import.import_records(conn, POSTGRES, LAYOUT, chunks.LAYOUT, kind, records)
