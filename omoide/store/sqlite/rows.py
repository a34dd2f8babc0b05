"""Row <-> model conversion and the tenant filter every memory query goes through."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from typing import Any

from omoide.store import records
from omoide.types import (
    MemoryItem,
    Scope,
    SearchFilters,
    dt_to_ms,
)

MEMORY_COLUMNS = """
    m.seq, m.id, m.user_id, m.scope_id, s.external_id AS session_ext, m.type, m.text,
    m.metadata, m.valid_from, m.invalid_at, m.supersedes, m.access_count,
    m.last_accessed_at, m.created_at, m.updated_at,
    (SELECT group_concat(ms.episode_id) FROM memory_sources ms WHERE ms.memory_seq = m.seq)
        AS sources,
    EXISTS (SELECT 1 FROM memory_vectors v WHERE v.memory_seq = m.seq) AS embedded
"""
MEMORY_FROM = "memories m LEFT JOIN sessions s ON s.id = m.session_id"


def tenant_key(scope: Scope) -> str:
    return f"{scope.user_id}\x1f{scope.scope_id}"


def tenant_token(scope: Scope) -> str:
    """An opaque FTS token per tenant: a letter and digits, which no stemmer rewrites."""
    digest = hashlib.blake2b(tenant_key(scope).encode(), digest_size=8).digest()
    return f"t{int.from_bytes(digest, 'big')}"


def memory_from_row(row: sqlite3.Row) -> MemoryItem:
    sources = row["sources"].split(",") if row["sources"] else []
    return records.memory(row, json.loads(row["metadata"]), sources)


def memory_filter(
    conn: sqlite3.Connection, scope: Scope, filters: SearchFilters, *, by_key: bool = False
) -> tuple[str, list[Any]]:
    """The WHERE clause (on alias ``m``) for one tenant and its filters.

    ``by_key=True`` when the query already names its rows by key (``seq IN (...)``): the unary
    ``+`` keeps SQLite from scanning the tenant index instead, which it otherwise prefers once
    the IN list is long (measured: 17 ms instead of 0.1 ms for 120 keys in a 100k tenant).
    """
    plus = "+" if by_key else ""
    clauses = [f"{plus}m.user_id = ?", f"{plus}m.scope_id = ?"]
    params: list[Any] = [scope.user_id, scope.scope_id]
    if filters.session_id is not None:
        clauses.append(
            "m.session_id = (SELECT id FROM sessions WHERE user_id = ? AND scope_id = ? "
            "AND external_id = ?)"
        )
        params += [scope.user_id, scope.scope_id, filters.session_id]
    _project_clause(conn, scope, filters.project, clauses, params)
    if filters.types:
        clauses.append(f"m.type IN ({','.join('?' * len(filters.types))})")
        params += [t.value for t in filters.types]
    if filters.created_after is not None:
        clauses.append("m.created_at >= ?")
        params.append(dt_to_ms(filters.created_after))
    if filters.created_before is not None:
        clauses.append("m.created_at < ?")
        params.append(dt_to_ms(filters.created_before))
    for key, value in (filters.metadata or {}).items():
        found, kind, param = _metadata_value(key)
        if value is None:
            clauses.append(f"{found} IS NULL")
            params.append(param)
        else:
            # json_extract gives an object or array as its JSON text and true as 1: without
            # the type, "{\"b\":1}" matched the object {"b": 1} and 1 matched true, which
            # PostgreSQL's jsonb equality (the filter's meaning) never does.
            kinds = ",".join(f"'{k}'" for k in _KINDS[_kind_of(value)])
            clauses.append(f"{kind} IN ({kinds}) AND {found} = ?")
            params += [param, param, int(value) if isinstance(value, bool) else value]
    if filters.as_of is not None:
        at = dt_to_ms(filters.as_of)
        clauses.append("m.valid_from <= ? AND (m.invalid_at IS NULL OR m.invalid_at > ?)")
        params += [at, at]
    elif not filters.include_invalid:
        clauses.append("m.invalid_at IS NULL")
    return " AND ".join(clauses), params


# The JSON types (SQLite's json_type names) a filter value of each kind matches: a boolean
# also matches 1, as on PostgreSQL (filters.py there), where SQLite cannot tell them apart.
_KINDS = {
    "text": ("text",),
    "number": ("integer", "real"),
    "bool": ("true", "false", "integer", "real"),
}


def _kind_of(value: str | int | float | bool) -> str:
    if isinstance(value, bool):
        return "bool"
    return "text" if isinstance(value, str) else "number"


def _metadata_value(key: str) -> tuple[str, str, str]:
    """SQL for the value of metadata ``key`` in ``m.metadata`` (NULL if absent), and its
    parameter. A JSON path names the key only while the key is printable ASCII without a
    quote or backslash: SQLite compares a path's label with the key as stored (escaped by
    ``json.dumps``: non-ASCII and control characters never matched) and cannot quote a quote
    (some keys were a path error, a 500). Any other key is looked up by its decoded name.
    The second SQL is the value's JSON type (NULL if absent), with the same parameter."""
    if key.isascii() and key.isprintable() and '"' not in key and "\\" not in key:
        return "json_extract(m.metadata, ?)", "json_type(m.metadata, ?)", f'$."{key}"'
    each = "FROM json_each(m.metadata) j WHERE j.key = ?)"
    return f"(SELECT j.value {each}", f"(SELECT j.type {each}", key


def _project_clause(
    conn: sqlite3.Connection,
    scope: Scope,
    project: str | None,
    clauses: list[str],
    params: list[Any],
) -> None:
    """Isolated projects see only their own sessions, and nobody else sees theirs."""
    row = None
    if project is not None:
        row = conn.execute(
            "SELECT id, isolated FROM projects WHERE user_id = ? AND scope_id = ? AND name = ?",
            (scope.user_id, scope.scope_id, project),
        ).fetchone()
        if row is None:
            clauses.append("0")  # an unknown project has no memories
            return
        if row["isolated"]:
            clauses.append("m.session_id IN (SELECT id FROM sessions WHERE project_id = ?)")
            params.append(row["id"])
            return
    has_isolated = conn.execute(
        "SELECT 1 FROM projects WHERE user_id = ? AND scope_id = ? AND isolated = 1 LIMIT 1",
        (scope.user_id, scope.scope_id),
    ).fetchone()
    if has_isolated:
        clauses.append(
            "(m.session_id IS NULL OR m.session_id NOT IN (SELECT s2.id FROM sessions s2 "
            "JOIN projects p2 ON p2.id = s2.project_id WHERE p2.isolated = 1 "
            "AND p2.user_id = ? AND p2.scope_id = ?))"
        )
        params += [scope.user_id, scope.scope_id]
