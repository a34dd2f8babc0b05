"""How SQLite plans, snapshots and restores a consolidation (``store.sql.consolidation``).

Memory sources point at a memory's ``seq``; id lists are one JSON parameter read with
``json_each``; the snapshot keeps each row as ``SELECT *`` reads it, and a revert inserts it
back column for column.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from omoide.store.ports.consolidation import ConsolidationPlan
from omoide.store.sql.consolidation import VERBATIM, ConsolidationLayout
from omoide.types import Scope

_IDS = "(SELECT value FROM json_each(?))"


def _memories(conn: sqlite3.Connection, scope: Scope, ids: list[str]) -> list[tuple[str, bool]]:
    eps = json.dumps(ids)
    cursor = conn.execute(
        "SELECT m.id, EXISTS (SELECT 1 FROM memory_vectors v WHERE v.memory_seq = m.seq)"
        " FROM memories m WHERE m.user_id = ? AND m.scope_id = ? AND m.invalid_at IS NULL"
        f" AND m.type IN ({','.join('?' * len(VERBATIM))}) AND m.seq IN"
        f" (SELECT ms.memory_seq FROM memory_sources ms WHERE ms.episode_id IN {_IDS})"
        " AND NOT EXISTS (SELECT 1 FROM memory_sources o WHERE o.memory_seq = m.seq"
        f" AND o.episode_id NOT IN {_IDS}) ORDER BY m.seq",
        (scope.user_id, scope.scope_id, *VERBATIM, eps, eps),
    )
    return [(str(r[0]), bool(r[1])) for r in cursor]


def _rows(conn: sqlite3.Connection, sql: str, ids: list[str], *params: str) -> list[dict[str, Any]]:
    """``sql`` (ending in a column, after any ``params`` placeholders) ``IN`` the ids."""
    return [dict(r) for r in conn.execute(sql + f" IN {_IDS}", (*params, json.dumps(ids)))]


def _graph_snapshot(
    conn: sqlite3.Connection, scope: Scope, plan: ConsolidationPlan
) -> dict[str, list[dict[str, Any]]]:
    """The rows of the entities and relationships the plan deletes, for a revert."""
    tenant = (scope.user_id, scope.scope_id)
    mine = "WHERE user_id = ? AND scope_id = ? AND id"
    entities = _rows(conn, f"SELECT * FROM entities {mine}", plan.entities, *tenant)
    kept = [e["id"] for e in entities]
    return {
        "entities": entities,
        "entity_episodes": _rows(conn, "SELECT * FROM entity_episodes WHERE entity_id", kept),
        "relationships": _rows(
            conn, f"SELECT * FROM relationships {mine}", plan.relationships, *tenant
        ),
    }


def _drop_vectors(conn: sqlite3.Connection, scope: Scope, ids: list[str]) -> None:
    conn.execute(
        "DELETE FROM memory_vectors WHERE memory_seq IN"
        f" (SELECT seq FROM memories WHERE user_id = ? AND scope_id = ? AND id IN {_IDS})",
        (scope.user_id, scope.scope_id, json.dumps(ids)),
    )


def _restore_graph(conn: sqlite3.Connection, scope: Scope, snapshot: dict[str, Any]) -> list[str]:
    """Re-insert swept entities (merged into a same-named one created since, if any),
    their provenance and their relationships whose ends still exist."""
    mapping: dict[str, str] = {}
    for entity in snapshot["entities"]:
        existing = conn.execute(
            "SELECT id FROM entities WHERE user_id = ? AND scope_id = ? AND name = ? AND type = ?",
            (scope.user_id, scope.scope_id, entity["name"], entity["type"]),
        ).fetchone()
        if existing is None:
            _insert(conn, "entities", entity)
        mapping[entity["id"]] = existing[0] if existing else entity["id"]
    for link in snapshot["entity_episodes"]:
        conn.execute(
            "INSERT OR IGNORE INTO entity_episodes (entity_id, episode_id)"
            " SELECT ?, id FROM episodes WHERE id = ?",
            (mapping[link["entity_id"]], link["episode_id"]),
        )
    for rel in snapshot["relationships"]:
        rel = {
            **rel,
            "from_id": mapping.get(rel["from_id"], rel["from_id"]),
            "to_id": mapping.get(rel["to_id"], rel["to_id"]),
        }
        ends = conn.execute(
            "SELECT count(*) FROM entities WHERE id IN (?, ?) AND user_id = ? AND scope_id = ?",
            (rel["from_id"], rel["to_id"], scope.user_id, scope.scope_id),
        ).fetchone()[0]
        if ends == len({rel["from_id"], rel["to_id"]}):
            _insert(conn, "relationships", rel, or_ignore=True)
    return sorted(set(mapping.values()))


def _insert(
    conn: sqlite3.Connection, table: str, row: dict[str, Any], *, or_ignore: bool = False
) -> None:
    columns = list(row)
    conn.execute(
        f"INSERT {'OR IGNORE ' if or_ignore else ''}INTO {table} ({', '.join(columns)})"
        f" VALUES ({', '.join('?' * len(columns))})",
        [row[c] for c in columns],
    )


def _by_id(row: Any) -> str:
    # the order SQLite's IN (json_each) lookups return rows in: by id
    return str(row["id"])


LAYOUT = ConsolidationLayout(
    memories=_memories,
    links_by_tenant=False,
    snapshot=_graph_snapshot,
    drop_vectors=_drop_vectors,
    restore_graph=_restore_graph,
    history_order=_by_id,
)
