"""SQLite side of consolidation: what merging episodes changes, doing it, and undoing it.

Nothing is erased. Consolidated episodes stay (``consolidated_at`` set); their verbatim memories
are invalidated with a history entry each and lose their vectors, so search no longer sees
them. Entities whose every provenance episode is consolidated are deleted with their
relationships, after a snapshot of their rows goes into the ``consolidations`` record, which
is what ``revert_consolidation`` restores from.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from omoide.errors import Conflict, NotFound
from omoide.store.ports.ledger import ConsolidationPlan
from omoide.store.sql.shared import write_history
from omoide.store.sqlite.dialect import SQLITE
from omoide.store.sqlite.shared import session_pk
from omoide.types import HistoryEvent, MemoryType, Scope, now_ms

# The verbatim forms of an episode; extracted facts, profile entries, chunks and summaries are
# distilled knowledge and stay.
VERBATIM = (MemoryType.RAW.value, MemoryType.EPISODIC.value)
_IDS = "(SELECT value FROM json_each(?))"


def consolidation_plan(
    conn: sqlite3.Connection, scope: Scope, episode_ids: Sequence[str]
) -> ConsolidationPlan:
    ids = list(dict.fromkeys(episode_ids))
    plan = ConsolidationPlan(episodes=ids)
    if not ids:
        return plan
    eps, tenant = json.dumps(ids), (scope.user_id, scope.scope_id)
    for row in conn.execute(
        "SELECT m.id, EXISTS (SELECT 1 FROM memory_vectors v WHERE v.memory_seq = m.seq)"
        " FROM memories m WHERE m.user_id = ? AND m.scope_id = ? AND m.invalid_at IS NULL"
        f" AND m.type IN ({','.join('?' * len(VERBATIM))}) AND m.seq IN"
        f" (SELECT ms.memory_seq FROM memory_sources ms WHERE ms.episode_id IN {_IDS})"
        " AND NOT EXISTS (SELECT 1 FROM memory_sources o WHERE o.memory_seq = m.seq"
        f" AND o.episode_id NOT IN {_IDS}) ORDER BY m.seq",
        (*tenant, *VERBATIM, eps, eps),
    ):
        plan.memories.append(row[0])
        if row[1]:
            plan.vectors.append(row[0])
    plan.entities = [
        r[0]
        for r in conn.execute(
            "SELECT e.id FROM entities e WHERE e.user_id = ? AND e.scope_id = ?"
            " AND e.source = 'extraction' AND e.id IN"
            f" (SELECT entity_id FROM entity_episodes WHERE episode_id IN {_IDS})"
            " AND NOT EXISTS (SELECT 1 FROM entity_episodes ee JOIN episodes ep"
            " ON ep.id = ee.episode_id WHERE ee.entity_id = e.id AND ep.consolidated_at IS NULL"
            f" AND ep.id NOT IN {_IDS}) ORDER BY e.id",
            (*tenant, eps, eps),
        )
    ]
    if plan.entities:
        ents = json.dumps(plan.entities)
        plan.relationships = [
            r[0]
            for r in conn.execute(
                "SELECT id FROM relationships WHERE user_id = ? AND scope_id = ?"
                f" AND (from_id IN {_IDS} OR to_id IN {_IDS}) ORDER BY id",
                (*tenant, ents, ents),
            )
        ]
    return plan


def _rows(conn: sqlite3.Connection, sql: str, ids: list[str], *params: str) -> list[dict[str, Any]]:
    """``sql`` (ending in a column, after any ``params`` placeholders) ``IN`` the ids."""
    return [dict(r) for r in conn.execute(sql + f" IN {_IDS}", (*params, json.dumps(ids)))]


def apply(
    conn: sqlite3.Connection,
    scope: Scope,
    session_id: str,
    consolidation_id: str,
    plan: ConsolidationPlan,
    report: dict[str, Any],
    actor: str,
) -> None:
    """Carry out ``plan`` (computed in this transaction) and record it as
    ``consolidation_id``. ``Conflict`` if an episode is already consolidated.

    Every statement is limited to the tenant as well as to the plan's ids, so a plan naming
    another tenant's rows changes nothing of theirs.
    """
    pk, ts = session_pk(conn, scope, session_id), now_ms()
    eps, tenant = json.dumps(plan.episodes), (scope.user_id, scope.scope_id)
    open_count = conn.execute(
        "SELECT count(*) FROM episodes WHERE session_id = ? AND consolidated_at IS NULL"
        f" AND id IN {_IDS}",
        (pk, eps),
    ).fetchone()[0]
    if open_count != len(plan.episodes):
        raise Conflict("some of these episodes are consolidated already or gone; run again")
    snapshot = _graph_snapshot(conn, scope, plan)
    _sweep_memories(conn, scope, plan, ts, actor)
    conn.execute(
        "UPDATE episodes SET consolidated_at = ?, consolidation_id = ?"
        f" WHERE session_id = ? AND id IN {_IDS}",
        (ts, consolidation_id, pk, eps),
    )
    conn.execute(
        f"DELETE FROM entities WHERE user_id = ? AND scope_id = ? AND id IN {_IDS}",
        (*tenant, json.dumps(plan.entities)),
    )
    conn.execute(
        "INSERT INTO consolidations (id, user_id, scope_id, session_id, summary_id, report,"
        " snapshot, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            consolidation_id,
            *tenant,
            pk,
            report.get("summary_id"),
            json.dumps(report),
            json.dumps(snapshot),
            ts,
        ),
    )


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


def _sweep_memories(
    conn: sqlite3.Connection, scope: Scope, plan: ConsolidationPlan, ts: int, actor: str
) -> None:
    """Invalidate the plan's memories (a history entry each) and drop their vectors."""
    tenant = (scope.user_id, scope.scope_id)
    found = conn.execute(
        f"SELECT id, text FROM memories WHERE user_id = ? AND scope_id = ? AND id IN {_IDS}",
        (*tenant, json.dumps(plan.memories)),
    ).fetchall()
    for row in found:
        write_history(conn, SQLITE, scope, row["id"], HistoryEvent.DELETE, row["text"], None, actor)
    conn.execute(
        "UPDATE memories SET invalid_at = ?, updated_at = ?"
        f" WHERE user_id = ? AND scope_id = ? AND id IN {_IDS}",
        (ts, ts, *tenant, json.dumps(plan.memories)),
    )
    conn.execute(
        "DELETE FROM memory_vectors WHERE memory_seq IN"
        f" (SELECT seq FROM memories WHERE user_id = ? AND scope_id = ? AND id IN {_IDS})",
        (*tenant, json.dumps(plan.vectors)),
    )


def revert(
    conn: sqlite3.Connection, scope: Scope, consolidation_id: str, actor: str
) -> dict[str, Any]:
    """Undo a consolidation: the memories are valid again (to re-embed), the episodes
    unconsolidated, the summary invalidated and the swept graph rows restored. Returns
    ``{"memories", "entities", "summary_id"}``."""
    row = conn.execute(
        "SELECT * FROM consolidations WHERE id = ? AND user_id = ? AND scope_id = ?",
        (consolidation_id, scope.user_id, scope.scope_id),
    ).fetchone()
    if row is None:
        raise NotFound(f"consolidation {consolidation_id!r} not found", id=consolidation_id)
    if row["reverted_at"] is not None:
        raise Conflict(f"consolidation {consolidation_id!r} is already reverted")
    ts, report = now_ms(), json.loads(row["report"])
    restored = []
    query = "SELECT id, text, invalid_at FROM memories WHERE id"
    for memory in _rows(conn, query, report["memories"]):
        if memory["invalid_at"] is not None:
            conn.execute(
                "UPDATE memories SET invalid_at = NULL, updated_at = ? WHERE id = ?",
                (ts, memory["id"]),
            )
            write_history(
                conn, SQLITE, scope, memory["id"], HistoryEvent.UPDATE, None, memory["text"], actor
            )
            restored.append(memory["id"])
    conn.execute(
        "UPDATE episodes SET consolidated_at = NULL, consolidation_id = NULL"
        " WHERE consolidation_id = ?",
        (consolidation_id,),
    )
    summary = conn.execute(
        "SELECT id, text FROM memories WHERE id = ? AND invalid_at IS NULL",
        (row["summary_id"],),
    ).fetchone()
    if summary is not None:
        conn.execute(
            "UPDATE memories SET invalid_at = ?, updated_at = ? WHERE id = ?",
            (ts, ts, summary["id"]),
        )
        write_history(
            conn, SQLITE, scope, summary["id"], HistoryEvent.DELETE, summary["text"], None, actor
        )
    entities = _restore_graph(conn, scope, json.loads(row["snapshot"]))
    conn.execute("UPDATE consolidations SET reverted_at = ? WHERE id = ?", (ts, consolidation_id))
    return {"memories": restored, "entities": entities, "summary_id": row["summary_id"]}


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
