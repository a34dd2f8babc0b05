"""Consolidation: what merging episodes changes, doing it, and undoing it.

Consolidating episodes invalidates the memories that came only from them (their verbatim
forms), drops those memories' vectors, and deletes the entities only they mentioned with their
relationships, after a snapshot of their rows goes into the ``consolidations`` record, which
``revert`` restores from. ``apply`` locks the episodes it consolidates where rows are locked, so
two passes over the same episodes cannot both succeed. Every statement is limited to the tenant
as well as to the plan's ids, so a plan naming another tenant's rows changes nothing of theirs.

What each schema does its own way (which memories an episode backs, the snapshot's row form,
vectors) comes in a ``ConsolidationLayout``. ``SQLConsolidationReads`` /
``SQLConsolidationWrites`` are the ``ConsolidationReads`` / ``ConsolidationWrites`` ports over
these functions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from omoide.errors import Conflict, NotFound
from omoide.store.ports.consolidation import ConsolidationPlan, EpisodeStat
from omoide.store.sql.dialect import Conn, Dialect, Reader
from omoide.store.sql.sessions import session_pk
from omoide.store.sql.shared import write_history
from omoide.types import HistoryEvent, MemoryType, Scope, now_ms

# The verbatim forms of an episode; extracted facts, profile entries, chunks and summaries are
# distilled knowledge and stay.
VERBATIM = [MemoryType.RAW.value, MemoryType.EPISODIC.value]


@dataclass(frozen=True)
class ConsolidationLayout:
    """What differs in how a backend plans, snapshots and restores a consolidation."""

    #: (connection, scope, episode ids) -> (memory id, has a vector) of the valid verbatim
    #: memories that came only from those episodes, in insertion order.
    memories: Callable[[Any, Scope, list[str]], list[tuple[str, bool]]]
    #: Whether ``entity_episodes`` rows carry the tenant's ``user_id``.
    links_by_tenant: bool
    #: (connection, scope, plan) -> the rows of the entities, provenance and relationships the
    #: plan deletes, as the record keeps them.
    snapshot: Callable[[Any, Scope, ConsolidationPlan], dict[str, Any]]
    #: (connection, scope, memory ids): delete those memories' vectors.
    drop_vectors: Callable[[Any, Scope, list[str]], None]
    #: (connection, scope, snapshot) -> the ids of the entities restored (or merged into).
    restore_graph: Callable[[Any, Scope, dict[str, Any]], list[str]]
    #: The order memories get their history entries in, of the rows an update returned.
    history_order: Callable[[Any], Any]


def plan(
    conn: Conn, d: Dialect, layout: ConsolidationLayout, scope: Scope, episode_ids: Sequence[str]
) -> ConsolidationPlan:
    ids = list(dict.fromkeys(episode_ids))
    found = ConsolidationPlan(episodes=ids)
    if not ids:
        return found
    for memory_id, embedded in layout.memories(conn, scope, ids):
        found.memories.append(memory_id)
        if embedded:
            found.vectors.append(memory_id)
    mine = "user_id = ? AND " if layout.links_by_tenant else ""
    ee_mine = "ee.user_id = e.user_id AND " if layout.links_by_tenant else ""
    ep_join = "ep.user_id = ee.user_id AND " if layout.links_by_tenant else ""
    owner = [scope.user_id] if layout.links_by_tenant else []
    linked, eps = d.among("episode_id", ids)
    other, _ = d.among("ep.id", ids)
    cursor = conn.execute(
        d.sql(
            "SELECT e.id FROM entities e WHERE e.user_id = ? AND e.scope_id = ?"
            " AND e.source = 'extraction'"
            f" AND e.id IN (SELECT entity_id FROM entity_episodes WHERE {mine}{linked})"
            " AND NOT EXISTS (SELECT 1 FROM entity_episodes ee JOIN episodes ep"
            f" ON {ep_join}ep.id = ee.episode_id WHERE {ee_mine}ee.entity_id = e.id"
            f" AND ep.consolidated_at IS NULL AND NOT ({other})) ORDER BY e.id{d.binary}"
        ),
        (scope.user_id, scope.scope_id, *owner, *eps, *eps),
    )
    found.entities = [r["id"] for r in cursor]
    if found.entities:
        starts, ents = d.among("from_id", found.entities)
        ends, _ = d.among("to_id", found.entities)
        cursor = conn.execute(
            d.sql(
                "SELECT id FROM relationships WHERE user_id = ? AND scope_id = ?"
                f" AND ({starts} OR {ends}) ORDER BY id{d.binary}"
            ),
            (scope.user_id, scope.scope_id, *ents, *ents),
        )
        found.relationships = [r["id"] for r in cursor]
    return found


def apply(
    conn: Conn,
    d: Dialect,
    layout: ConsolidationLayout,
    scope: Scope,
    session_id: str,
    consolidation_id: str,
    plan: ConsolidationPlan,
    report: dict[str, Any],
    actor: str,
) -> None:
    """Carry out ``plan`` (computed in this transaction) and record it as
    ``consolidation_id``. ``Conflict`` if an episode is already consolidated."""
    pk, ts, tenant = (
        session_pk(conn, d, scope, session_id),
        now_ms(),
        (scope.user_id, scope.scope_id),
    )
    episodes, eps = d.among("id", plan.episodes)
    open_rows = conn.execute(
        d.sql(
            "SELECT id FROM episodes WHERE user_id = ? AND session_id = ?"
            f" AND consolidated_at IS NULL AND {episodes}"
        )
        + d.row_lock,
        (scope.user_id, pk, *eps),
    ).fetchall()
    if len(open_rows) != len(plan.episodes):
        raise Conflict("some of these episodes are consolidated already or gone; run again")
    snapshot = layout.snapshot(conn, scope, plan)
    memories, ids = d.among("id", plan.memories)
    invalidated = conn.execute(
        d.sql(
            "UPDATE memories SET invalid_at = ?, updated_at = ? WHERE user_id = ?"
            f" AND scope_id = ? AND {memories} RETURNING id, text, seq"
        ),
        (ts, ts, *tenant, *ids),
    ).fetchall()
    for row in sorted(invalidated, key=layout.history_order):
        write_history(conn, d, scope, row["id"], HistoryEvent.DELETE, row["text"], None, actor)
    layout.drop_vectors(conn, scope, plan.vectors)
    entities, ents = d.among("id", plan.entities)
    conn.execute(
        d.sql(f"DELETE FROM entities WHERE user_id = ? AND scope_id = ? AND {entities}"),
        (*tenant, *ents),
    )
    conn.execute(
        d.sql(
            "UPDATE episodes SET consolidated_at = ?, consolidation_id = ?"
            f" WHERE user_id = ? AND session_id = ? AND {episodes}"
        ),
        (ts, consolidation_id, scope.user_id, pk, *eps),
    )
    conn.execute(
        d.sql(
            "INSERT INTO consolidations (id, user_id, scope_id, session_id, summary_id, report,"
            f" snapshot, created_at) VALUES (?, ?, ?, ?, ?, {d.json_param}, {d.json_param}, ?)"
        ),
        (
            *(consolidation_id, *tenant, pk, report.get("summary_id")),
            *(d.dump_json(report), d.dump_json(snapshot), ts),
        ),
    )


def revert(
    conn: Conn,
    d: Dialect,
    layout: ConsolidationLayout,
    scope: Scope,
    consolidation_id: str,
    actor: str,
) -> dict[str, Any]:
    """Undo a consolidation: the memories are valid again (to re-embed), the episodes
    unconsolidated, the summary invalidated and the swept graph rows restored. Returns
    ``{"memories", "entities", "summary_id"}``."""
    user = scope.user_id
    row = conn.execute(
        d.sql("SELECT * FROM consolidations WHERE user_id = ? AND scope_id = ? AND id = ?")
        + d.row_lock,
        (user, scope.scope_id, consolidation_id),
    ).fetchone()
    if row is None:
        raise NotFound(f"consolidation {consolidation_id!r} not found", id=consolidation_id)
    if row["reverted_at"] is not None:
        raise Conflict(f"consolidation {consolidation_id!r} is already reverted")
    ts, report = now_ms(), d.load_json(row["report"])
    memories, ids = d.among("id", list(report["memories"]))
    restored = conn.execute(
        d.sql(
            "UPDATE memories SET invalid_at = NULL, updated_at = ? WHERE user_id = ?"
            f" AND {memories} AND invalid_at IS NOT NULL RETURNING id, text, seq"
        ),
        (ts, user, *ids),
    ).fetchall()
    restored = sorted(restored, key=layout.history_order)
    for memory in restored:
        write_history(
            conn, d, scope, memory["id"], HistoryEvent.UPDATE, None, memory["text"], actor
        )
    conn.execute(
        d.sql(
            "UPDATE episodes SET consolidated_at = NULL, consolidation_id = NULL"
            " WHERE user_id = ? AND consolidation_id = ?"
        ),
        (user, consolidation_id),
    )
    summary = conn.execute(
        d.sql(
            "UPDATE memories SET invalid_at = ?, updated_at = ? WHERE user_id = ? AND id = ?"
            " AND invalid_at IS NULL RETURNING id, text"
        ),
        (ts, ts, user, row["summary_id"]),
    ).fetchone()
    if summary is not None:
        write_history(
            conn, d, scope, summary["id"], HistoryEvent.DELETE, summary["text"], None, actor
        )
    entities = layout.restore_graph(conn, scope, d.load_json(row["snapshot"]))
    conn.execute(
        d.sql("UPDATE consolidations SET reverted_at = ? WHERE user_id = ? AND id = ?"),
        (ts, user, consolidation_id),
    )
    return {
        "memories": [m["id"] for m in restored],
        "entities": entities,
        "summary_id": row["summary_id"],
    }


class SQLConsolidationReads:
    """Episode stats and plans, each in one snapshot (see ``ConsolidationReads``)."""

    def __init__(
        self, db: Reader, dialect: Dialect, layout: ConsolidationLayout, episode_order: str
    ) -> None:
        self._db = db
        self._d = dialect
        self._layout = layout
        self._episode_order = episode_order

    def episode_stats(self, scope: Scope, session_id: str) -> list[EpisodeStat]:
        with self._db.read() as conn:
            cursor = conn.execute(
                self._d.sql(
                    "SELECT id, created_at, access_count, last_accessed_at, consolidated_at"
                    " FROM episodes WHERE user_id = ? AND session_id = ?"
                    f" ORDER BY created_at, {self._episode_order}"
                ),
                (scope.user_id, session_pk(conn, self._d, scope, session_id)),
            )
            return [
                EpisodeStat(
                    r["id"],
                    int(r["created_at"]),
                    int(r["access_count"]),
                    r["last_accessed_at"],
                    r["consolidated_at"] is not None,
                )
                for r in cursor.fetchall()
            ]

    def consolidation_plan(self, scope: Scope, episode_ids: Sequence[str]) -> ConsolidationPlan:
        with self._db.read() as conn:
            return plan(conn, self._d, self._layout, scope, episode_ids)


class SQLConsolidationWrites:
    """Consolidations and reverts on the transaction's connection."""

    def __init__(self, conn: Conn, dialect: Dialect, layout: ConsolidationLayout) -> None:
        self._conn = conn
        self._d = dialect
        self._layout = layout

    def consolidation_plan(self, scope: Scope, episode_ids: Sequence[str]) -> ConsolidationPlan:
        return plan(self._conn, self._d, self._layout, scope, episode_ids)

    def apply_consolidation(
        self,
        scope: Scope,
        session_id: str,
        consolidation_id: str,
        plan: ConsolidationPlan,
        report: dict[str, Any],
        actor: str,
    ) -> None:
        apply(
            self._conn,
            self._d,
            self._layout,
            scope,
            session_id,
            consolidation_id,
            plan,
            report,
            actor,
        )

    def revert_consolidation(
        self, scope: Scope, consolidation_id: str, actor: str
    ) -> dict[str, Any]:
        return revert(self._conn, self._d, self._layout, scope, consolidation_id, actor)
