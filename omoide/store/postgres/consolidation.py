"""How PostgreSQL plans, snapshots and restores a consolidation (``store.sql.consolidation``).

Memory sources name a memory by tenant and id; the snapshot keeps each row as ``to_jsonb``
writes it, and a revert inserts it back with ``jsonb_populate_record``.
"""

from __future__ import annotations

from typing import Any

from omoide.store.ports.consolidation import ConsolidationPlan
from omoide.store.postgres.db import Conn
from omoide.store.postgres.shared import jsonb
from omoide.store.sql.consolidation import VERBATIM, ConsolidationLayout
from omoide.types import Scope

_PLAN_MEMORIES = """
SELECT m.id, EXISTS (SELECT 1 FROM memory_vectors v WHERE v.user_id = m.user_id
                     AND v.memory_id = m.id) AS embedded
FROM memories m WHERE m.user_id = %(u)s AND m.scope_id = %(s)s AND m.invalid_at IS NULL
 AND m.type = ANY(%(types)s)
 AND m.id IN (SELECT ms.memory_id FROM memory_sources ms WHERE ms.user_id = %(u)s
              AND ms.episode_id = ANY(%(eps)s))
 AND NOT EXISTS (SELECT 1 FROM memory_sources o WHERE o.user_id = m.user_id
                 AND o.memory_id = m.id AND NOT (o.episode_id = ANY(%(eps)s)))
ORDER BY m.seq
"""


def _memories(conn: Conn, scope: Scope, ids: list[str]) -> list[tuple[str, bool]]:
    args = {"u": scope.user_id, "s": scope.scope_id, "eps": ids, "types": VERBATIM}
    return [(str(r["id"]), bool(r["embedded"])) for r in conn.execute(_PLAN_MEMORIES, args)]


def _graph_snapshot(conn: Conn, scope: Scope, plan: ConsolidationPlan) -> dict[str, Any]:
    user = scope.user_id
    return {
        "entities": _snapshot(conn, "entities", "id", user, plan.entities),
        "entity_episodes": _snapshot(conn, "entity_episodes", "entity_id", user, plan.entities),
        "relationships": _snapshot(conn, "relationships", "id", user, plan.relationships),
    }


def _drop_vectors(conn: Conn, scope: Scope, ids: list[str]) -> None:
    conn.execute(
        "DELETE FROM memory_vectors WHERE user_id = %s AND scope_id = %s AND memory_id = ANY(%s)",
        (scope.user_id, scope.scope_id, ids),
    )


def _snapshot(conn: Conn, table: str, key: str, user_id: str, ids: list[str]) -> list[Any]:
    cursor = conn.execute(
        f"SELECT to_jsonb(t) AS row FROM {table} t WHERE t.user_id = %s AND t.{key} = ANY(%s)",
        (user_id, ids),
    )
    return [r["row"] for r in cursor]


def _restore_graph(conn: Conn, scope: Scope, snapshot: dict[str, Any]) -> list[str]:
    """Re-insert swept entities (merged into a same-named one created since, if any),
    their provenance and their relationships whose ends still exist."""
    mapping: dict[str, str] = {}
    for entity in snapshot["entities"]:
        existing = conn.execute(
            "SELECT id FROM entities WHERE user_id = %s AND scope_id = %s"
            " AND lower(name) = lower(%s) AND type = %s",
            (scope.user_id, scope.scope_id, entity["name"], entity["type"]),
        ).fetchone()
        if existing is None:
            _insert(conn, "entities", {k: v for k, v in entity.items() if k != "seq"})
        mapping[entity["id"]] = existing["id"] if existing else entity["id"]
    for link in snapshot["entity_episodes"]:
        conn.execute(
            "INSERT INTO entity_episodes (user_id, entity_id, episode_id)"
            " SELECT user_id, %s, id FROM episodes WHERE user_id = %s AND id = %s"
            " ON CONFLICT DO NOTHING",
            (mapping[link["entity_id"]], scope.user_id, link["episode_id"]),
        )
    for rel in snapshot["relationships"]:
        rel = {
            **{k: v for k, v in rel.items() if k != "seq"},
            "from_id": mapping.get(rel["from_id"], rel["from_id"]),
            "to_id": mapping.get(rel["to_id"], rel["to_id"]),
        }
        ends = conn.execute(
            "SELECT count(*) AS n FROM entities WHERE user_id = %s AND scope_id = %s"
            " AND id = ANY(%s)",
            (scope.user_id, scope.scope_id, [rel["from_id"], rel["to_id"]]),
        ).fetchone()
        if ends is not None and ends["n"] == len({rel["from_id"], rel["to_id"]}):
            _insert(conn, "relationships", rel, or_ignore=True)
    return sorted(set(mapping.values()))


def _insert(conn: Conn, table: str, row: dict[str, Any], *, or_ignore: bool = False) -> None:
    """Insert a snapshot row (``to_jsonb`` of a row of ``table``) with its own values."""
    columns = ", ".join(row)
    conflict = " ON CONFLICT DO NOTHING" if or_ignore else ""
    conn.execute(
        f"INSERT INTO {table} ({columns}) SELECT {columns}"
        f" FROM jsonb_populate_record(NULL::{table}, %s::jsonb){conflict}",
        (jsonb(row),),
    )


def _by_seq(row: Any) -> int:
    return int(row["seq"])


LAYOUT = ConsolidationLayout(
    memories=_memories,
    links_by_tenant=True,
    snapshot=_graph_snapshot,
    drop_vectors=_drop_vectors,
    restore_graph=_restore_graph,
    history_order=_by_seq,
)
