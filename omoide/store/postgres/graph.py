"""How PostgreSQL stores and walks the graph for the shared graph ports (``store.sql.graph``).

Entities are unique per tenant by ``lower(name)``; every row carries the tenant's ``user_id``
(the distribution key), provenance rows too. PostgreSQL allows one recursive reference per CTE,
so the walk goes both directions in one step. Entity vectors are pgvector columns searched by
inner product.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from omoide.store.sql.dialect import Conn
from omoide.store.sql.graph import GraphLayout
from omoide.types import Scope

_WALK = """
WITH RECURSIVE walk(id, depth) AS (
    SELECT %s::text, 0
    UNION
    SELECT CASE WHEN r.from_id = w.id THEN r.to_id ELSE r.from_id END, w.depth + 1
    FROM walk w JOIN relationships r
      ON r.user_id = %s AND r.scope_id = %s AND (r.from_id = w.id OR r.to_id = w.id)
    WHERE w.depth < %s
)
SELECT id, min(depth) AS depth FROM walk GROUP BY id ORDER BY min(depth), id COLLATE "C" LIMIT %s
"""


def _vector_search(
    conn: Conn, scope: Scope, vector: np.ndarray, limit: int
) -> list[tuple[str, float]]:
    """Exact inner product over the tenant's entity vectors of the query's dimension."""
    query = vector.astype(np.float32, copy=False)
    cursor = conn.execute(
        "SELECT entity_id, -(embedding <#> %s) AS score FROM entity_vectors"
        " WHERE user_id = %s AND scope_id = %s AND vector_dims(embedding) = %s"
        " ORDER BY embedding <#> %s, entity_id LIMIT %s",
        (query, scope.user_id, scope.scope_id, query.shape[0], query, limit),
    )
    return [(str(r["entity_id"]), float(r["score"])) for r in cursor]


def _put_vector(conn: Conn, scope: Scope, entity_id: str, vector: np.ndarray) -> None:
    # INSERT ... SELECT: nothing when the entity was deleted before its embedding arrived.
    conn.execute(
        "INSERT INTO entity_vectors (user_id, scope_id, entity_id, embedding)"
        " SELECT user_id, scope_id, id, %s FROM entities"
        " WHERE user_id = %s AND scope_id = %s AND id = %s"
        " ON CONFLICT (user_id, entity_id) DO UPDATE SET embedding = excluded.embedding",
        (vector.astype(np.float32), scope.user_id, scope.scope_id, entity_id),
    )


def _episode_ids(raw: Any) -> list[str]:
    return list(raw or [])


LAYOUT = GraphLayout(
    order="seq",
    entity_select=(
        "SELECT e.*, ARRAY(SELECT ee.episode_id FROM entity_episodes ee"
        " WHERE ee.user_id = e.user_id AND ee.entity_id = e.id ORDER BY ee.episode_id)"
        " AS episodes FROM entities e"
    ),
    episode_ids=_episode_ids,
    relationship_select=(
        "SELECT r.*, f.name AS from_name, t.name AS to_name FROM relationships r"
        " JOIN entities f ON f.user_id = r.user_id AND f.id = r.from_id"
        " JOIN entities t ON t.user_id = r.user_id AND t.id = r.to_id"
    ),
    entity_key="user_id, scope_id, lower(name)",
    relationship_key="user_id, from_id, to_id, label",
    links_by_tenant=True,
    walk=_WALK,
    walk_args=lambda scope, entity_id, depth, limit: (
        entity_id,
        scope.user_id,
        scope.scope_id,
        depth,
        limit,
    ),
    vector_search=_vector_search,
    put_vector=_put_vector,
)
