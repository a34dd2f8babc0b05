"""PostgreSQL side of consolidation: what merging episodes changes, doing it, and undoing it.

Nothing is erased. Consolidated episodes stay (``consolidated_at`` set); their verbatim memories
are invalidated with a history entry each and lose their vectors, so search no longer sees
them. Entities whose every provenance episode is consolidated are deleted with their
relationships, after a snapshot of their rows (``to_jsonb``) goes into the ``consolidations``
record, which ``revert_consolidation`` restores from (``jsonb_populate_record``).
``apply`` locks the episodes it consolidates, so two passes over the same episodes cannot
both succeed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from omoide.errors import Conflict, NotFound
from omoide.store.ports.ledger import ConsolidationPlan
from omoide.store.postgres.db import Conn
from omoide.store.postgres.dialect import POSTGRES
from omoide.store.postgres.shared import jsonb, session_pk
from omoide.store.sql.shared import write_history
from omoide.types import HistoryEvent, MemoryType, Scope, now_ms

# The verbatim forms of an episode; extracted facts, profile entries, chunks and summaries are
# distilled knowledge and stay.
VERBATIM = [MemoryType.RAW.value, MemoryType.EPISODIC.value]

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
_PLAN_ENTITIES = """
SELECT e.id FROM entities e WHERE e.user_id = %(u)s AND e.scope_id = %(s)s
 AND e.source = 'extraction'
 AND e.id IN (SELECT entity_id FROM entity_episodes WHERE user_id = %(u)s
              AND episode_id = ANY(%(eps)s))
 AND NOT EXISTS (SELECT 1 FROM entity_episodes ee JOIN episodes ep
                 ON ep.user_id = ee.user_id AND ep.id = ee.episode_id
                 WHERE ee.user_id = e.user_id AND ee.entity_id = e.id
                 AND ep.consolidated_at IS NULL AND NOT (ep.id = ANY(%(eps)s)))
ORDER BY e.id COLLATE "C"
"""


def consolidation_plan(conn: Conn, scope: Scope, episode_ids: Sequence[str]) -> ConsolidationPlan:
    ids = list(dict.fromkeys(episode_ids))
    plan = ConsolidationPlan(episodes=ids)
    if not ids:
        return plan
    args = {"u": scope.user_id, "s": scope.scope_id, "eps": ids, "types": VERBATIM}
    for row in conn.execute(_PLAN_MEMORIES, args):
        plan.memories.append(row["id"])
        if row["embedded"]:
            plan.vectors.append(row["id"])
    plan.entities = [r["id"] for r in conn.execute(_PLAN_ENTITIES, args)]
    if plan.entities:
        plan.relationships = [
            r["id"]
            for r in conn.execute(
                "SELECT id FROM relationships WHERE user_id = %s AND scope_id = %s"
                ' AND (from_id = ANY(%s) OR to_id = ANY(%s)) ORDER BY id COLLATE "C"',
                (scope.user_id, scope.scope_id, plan.entities, plan.entities),
            )
        ]
    return plan


def _snapshot(conn: Conn, table: str, key: str, user_id: str, ids: list[str]) -> list[Any]:
    cursor = conn.execute(
        f"SELECT to_jsonb(t) AS row FROM {table} t WHERE t.user_id = %s AND t.{key} = ANY(%s)",
        (user_id, ids),
    )
    return [r["row"] for r in cursor]


def apply(
    conn: Conn,
    scope: Scope,
    session_id: str,
    consolidation_id: str,
    plan: ConsolidationPlan,
    report: dict[str, Any],
    actor: str,
) -> None:
    """Carry out ``plan`` (computed in this transaction) and record it as
    ``consolidation_id``. ``Conflict`` if an episode is already consolidated."""
    pk, ts, user = session_pk(conn, scope, session_id), now_ms(), scope.user_id
    open_rows = conn.execute(
        "SELECT id FROM episodes WHERE user_id = %s AND session_id = %s"
        " AND consolidated_at IS NULL AND id = ANY(%s) FOR UPDATE",
        (user, pk, plan.episodes),
    ).fetchall()
    if len(open_rows) != len(plan.episodes):
        raise Conflict("some of these episodes are consolidated already or gone; run again")
    snapshot = {
        "entities": _snapshot(conn, "entities", "id", user, plan.entities),
        "entity_episodes": _snapshot(conn, "entity_episodes", "entity_id", user, plan.entities),
        "relationships": _snapshot(conn, "relationships", "id", user, plan.relationships),
    }
    _sweep(conn, scope, plan, ts, actor)
    conn.execute(
        "UPDATE episodes SET consolidated_at = %s, consolidation_id = %s"
        " WHERE user_id = %s AND session_id = %s AND id = ANY(%s)",
        (ts, consolidation_id, user, pk, plan.episodes),
    )
    conn.execute(
        "INSERT INTO consolidations (id, user_id, scope_id, session_id, summary_id, report,"
        " snapshot, created_at) VALUES (%s, %s, %s, %s, %s, %s::jsonb, %s::jsonb, %s)",
        (
            consolidation_id,
            user,
            scope.scope_id,
            pk,
            report.get("summary_id"),
            jsonb(report),
            jsonb(snapshot),
            ts,
        ),
    )


def _sweep(conn: Conn, scope: Scope, plan: ConsolidationPlan, ts: int, actor: str) -> None:
    """Invalidate the plan's memories (one history entry each), drop their vectors, and
    delete the swept entities (cascading to their edges); only rows of ``scope``."""
    tenant = (scope.user_id, scope.scope_id)
    invalidated = conn.execute(
        "UPDATE memories SET invalid_at = %s, updated_at = %s WHERE user_id = %s"
        " AND scope_id = %s AND id = ANY(%s) RETURNING id, text, seq",
        (ts, ts, *tenant, plan.memories),
    ).fetchall()
    for row in sorted(invalidated, key=lambda r: int(r["seq"])):
        write_history(
            conn, POSTGRES, scope, row["id"], HistoryEvent.DELETE, row["text"], None, actor
        )
    conn.execute(
        "DELETE FROM memory_vectors WHERE user_id = %s AND scope_id = %s AND memory_id = ANY(%s)",
        (*tenant, plan.vectors),
    )
    conn.execute(
        "DELETE FROM entities WHERE user_id = %s AND scope_id = %s AND id = ANY(%s)",
        (*tenant, plan.entities),
    )


def revert(conn: Conn, scope: Scope, consolidation_id: str, actor: str) -> dict[str, Any]:
    """Undo a consolidation: the memories are valid again (to re-embed), the episodes
    unconsolidated, the summary invalidated and the swept graph rows restored. Returns
    ``{"memories", "entities", "summary_id"}``."""
    user = scope.user_id
    row = conn.execute(
        "SELECT * FROM consolidations WHERE user_id = %s AND scope_id = %s AND id = %s FOR UPDATE",
        (user, scope.scope_id, consolidation_id),
    ).fetchone()
    if row is None:
        raise NotFound(f"consolidation {consolidation_id!r} not found", id=consolidation_id)
    if row["reverted_at"] is not None:
        raise Conflict(f"consolidation {consolidation_id!r} is already reverted")
    ts, report = now_ms(), row["report"]
    restored_rows = conn.execute(
        "UPDATE memories SET invalid_at = NULL, updated_at = %s WHERE user_id = %s"
        " AND id = ANY(%s) AND invalid_at IS NOT NULL RETURNING id, text, seq",
        (ts, user, list(report["memories"])),
    ).fetchall()
    restored_rows.sort(key=lambda r: int(r["seq"]))
    for memory in restored_rows:
        write_history(
            conn, POSTGRES, scope, memory["id"], HistoryEvent.UPDATE, None, memory["text"], actor
        )
    conn.execute(
        "UPDATE episodes SET consolidated_at = NULL, consolidation_id = NULL"
        " WHERE user_id = %s AND consolidation_id = %s",
        (user, consolidation_id),
    )
    summary = conn.execute(
        "UPDATE memories SET invalid_at = %s, updated_at = %s WHERE user_id = %s AND id = %s"
        " AND invalid_at IS NULL RETURNING id, text",
        (ts, ts, user, row["summary_id"]),
    ).fetchone()
    if summary is not None:
        write_history(
            conn, POSTGRES, scope, summary["id"], HistoryEvent.DELETE, summary["text"], None, actor
        )
    entities = _restore_graph(conn, scope, row["snapshot"])
    conn.execute(
        "UPDATE consolidations SET reverted_at = %s WHERE user_id = %s AND id = %s",
        (ts, user, consolidation_id),
    )
    return {
        "memories": [m["id"] for m in restored_rows],
        "entities": entities,
        "summary_id": row["summary_id"],
    }


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
