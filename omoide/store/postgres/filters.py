"""The tenant filter every memory query goes through: one WHERE clause on alias ``m``."""

from __future__ import annotations

import json
from typing import Any

from omoide.types import Scope, SearchFilters, dt_to_ms


def memory_filter(scope: Scope, filters: SearchFilters) -> tuple[str, list[Any]]:
    """The WHERE clause (on alias ``m``) for one tenant and its filters, and its parameters:
    one clause, no statement of its own (so a search is one round trip)."""
    clauses = ["m.user_id = %s", "m.scope_id = %s"]
    params: list[Any] = [scope.user_id, scope.scope_id]
    if filters.session_id is not None:
        clauses.append(
            "m.session_id = (SELECT id FROM sessions WHERE user_id = %s AND scope_id = %s"
            " AND external_id = %s)"
        )
        params += [scope.user_id, scope.scope_id, filters.session_id]
    _project_clause(scope, filters.project, clauses, params)
    if filters.types:
        clauses.append("m.type = ANY(%s)")
        params.append([t.value for t in filters.types])
    if filters.created_after is not None:
        clauses.append("m.created_at >= %s")
        params.append(dt_to_ms(filters.created_after))
    if filters.created_before is not None:
        clauses.append("m.created_at < %s")
        params.append(dt_to_ms(filters.created_before))
    for key, value in (filters.metadata or {}).items():
        if value is None:  # SQLite's json_extract(...) IS NULL: missing, or JSON null
            clauses.append("coalesce(m.metadata -> %s, 'null'::jsonb) = 'null'::jsonb")
            params.append(key)
        elif isinstance(value, bool):  # SQLite compares JSON true with 1: accept both
            clauses.append("(m.metadata -> %s) IN (%s::jsonb, %s::jsonb)")
            params += [key, json.dumps(value), json.dumps(int(value))]
        else:
            clauses.append("m.metadata -> %s = %s::jsonb")
            params += [key, json.dumps(value)]
    if filters.as_of is not None:
        at = dt_to_ms(filters.as_of)
        clauses.append("m.valid_from <= %s AND (m.invalid_at IS NULL OR m.invalid_at > %s)")
        params += [at, at]
    elif not filters.include_invalid:
        clauses.append("m.invalid_at IS NULL")
    return " AND ".join(clauses), params


def _project_clause(
    scope: Scope, project: str | None, clauses: list[str], params: list[Any]
) -> None:
    """Isolated projects see only their own sessions, and nobody else sees theirs. The
    projects are looked up by subqueries of the statement itself (no statement of their own):
    a named project that is missing matches nothing; an isolated one, its sessions only;
    any other, like no project, every memory but those of isolated projects' sessions."""
    tenant = [scope.user_id, scope.scope_id]
    if project is not None:
        clauses.append(
            "(m.session_id IN (SELECT s1.id FROM sessions s1 JOIN projects p1"
            " ON p1.user_id = s1.user_id AND p1.id = s1.project_id"
            " WHERE p1.user_id = %s AND p1.scope_id = %s AND p1.name = %s AND p1.isolated)"
            " OR (EXISTS (SELECT 1 FROM projects p3 WHERE p3.user_id = %s AND p3.scope_id = %s"
            f" AND p3.name = %s AND NOT p3.isolated) AND {_NOT_ISOLATED}))"
        )
        params += [*tenant, project, *tenant, project, *tenant, *tenant]
        return
    clauses.append(_NOT_ISOLATED)
    params += [*tenant, *tenant]


# No isolated project in the tenant (one index probe, run once per statement), or the
# memory's session is none of theirs.
_NOT_ISOLATED = (
    "(NOT EXISTS (SELECT 1 FROM projects p4 WHERE p4.user_id = %s AND p4.scope_id = %s"
    " AND p4.isolated) OR m.session_id IS NULL OR m.session_id NOT IN (SELECT s2.id"
    " FROM sessions s2 JOIN projects p2 ON p2.user_id = s2.user_id AND p2.id = s2.project_id"
    " WHERE p2.isolated AND p2.user_id = %s AND p2.scope_id = %s))"
)
