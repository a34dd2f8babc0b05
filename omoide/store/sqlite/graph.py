"""How SQLite stores and walks the graph for the shared graph ports (``store.sql.graph``).

An entity's name column is NOCASE, unique per tenant (``entities_name``); relationships are
unique by their ends and label; provenance rows name the entity only. The walk goes each
direction in its own recursive step (each can use its index). Entity vectors are float32 BLOBs
scanned exactly per tenant (entities number in thousands, not millions, per tenant).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from omoide.store.sql.dialect import Conn
from omoide.store.sql.graph import GraphLayout
from omoide.store.sqlite import rows
from omoide.types import Scope

_WALK = """
WITH RECURSIVE walk(id, depth) AS (
    SELECT ?, 0
    UNION
    SELECT r.to_id, w.depth + 1 FROM walk w JOIN relationships r ON r.from_id = w.id
     WHERE w.depth < ? AND r.user_id = ? AND r.scope_id = ?
    UNION
    SELECT r.from_id, w.depth + 1 FROM walk w JOIN relationships r ON r.to_id = w.id
     WHERE w.depth < ? AND r.user_id = ? AND r.scope_id = ?
)
SELECT id, min(depth) AS depth FROM walk GROUP BY id ORDER BY depth, id LIMIT ?
"""


def _vector_search(
    conn: Conn, scope: Scope, vector: np.ndarray, limit: int
) -> list[tuple[str, float]]:
    """Exact cosine scan of the tenant's entity vectors of the query's dimension."""
    cursor = conn.execute(
        "SELECT entity_id, vec FROM entity_vectors WHERE tenant = ?", (rows.tenant_key(scope),)
    )
    query = vector.astype(np.float32, copy=False)
    width = query.shape[0] * 4
    found = [(r[0], r[1]) for r in cursor if len(r[1]) == width]
    if not found:
        return []
    matrix = np.frombuffer(b"".join(blob for _, blob in found), dtype=np.float32)
    scores = matrix.reshape(len(found), -1) @ query
    order = np.argsort(-scores, kind="stable")[:limit]
    return [(found[i][0], float(scores[i])) for i in order]


def _put_vector(conn: Conn, scope: Scope, entity_id: str, vector: np.ndarray) -> None:
    exists = conn.execute(
        "SELECT 1 FROM entities WHERE id = ? AND user_id = ? AND scope_id = ?",
        (entity_id, scope.user_id, scope.scope_id),
    ).fetchone()
    if exists is None:
        return  # deleted before its embedding arrived
    conn.execute(
        "INSERT INTO entity_vectors (entity_id, tenant, vec) VALUES (?, ?, ?)"
        " ON CONFLICT (entity_id) DO UPDATE SET vec = excluded.vec",
        (entity_id, rows.tenant_key(scope), vector.astype(np.float32).tobytes()),
    )


def _episode_ids(raw: Any) -> list[str]:
    return str(raw).split(",") if raw else []


LAYOUT = GraphLayout(
    order="rowid",
    entity_select=(
        "SELECT e.*, (SELECT group_concat(ee.episode_id) FROM entity_episodes ee"
        " WHERE ee.entity_id = e.id) AS episodes FROM entities e"
    ),
    episode_ids=_episode_ids,
    relationship_select=(
        "SELECT r.*, f.name AS from_name, t.name AS to_name FROM relationships r"
        " JOIN entities f ON f.id = r.from_id JOIN entities t ON t.id = r.to_id"
    ),
    entity_key="user_id, scope_id, name",
    relationship_key="from_id, to_id, label",
    links_by_tenant=False,
    walk=_WALK,
    walk_args=lambda scope, entity_id, depth, limit: (
        *(entity_id, depth, scope.user_id, scope.scope_id),
        *(depth, scope.user_id, scope.scope_id, limit),
    ),
    vector_search=_vector_search,
    put_vector=_put_vector,
)
