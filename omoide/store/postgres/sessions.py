"""How PostgreSQL lays out episodes for the shared sessions port (``store.sql.sessions``).

Memory sources name a memory by tenant and id, episodes carry a ``seq``, and a batch's missing
sessions are created by one statement (each statement is a round trip to the server).
"""

from __future__ import annotations

from omoide.store.sql.dialect import Conn
from omoide.store.sql.sessions import EpisodeLayout
from omoide.types import Scope


def _ensure_many(conn: Conn, scope: Scope, session_ids: list[str], at_ms: int) -> None:
    # NOT EXISTS: existing sessions take no identity value; ON CONFLICT: nor is a session a
    # concurrent writer just created an error. Ids are inserted in the order given.
    conn.execute(
        "INSERT INTO sessions (user_id, scope_id, external_id, metadata, created_at,"
        " updated_at) SELECT %s, %s, u.id, '{}', %s, %s"
        " FROM unnest(%s::text[]) WITH ORDINALITY AS u(id, ord)"
        " WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.user_id = %s"
        " AND s.scope_id = %s AND s.external_id = u.id) ORDER BY u.ord"
        " ON CONFLICT (user_id, scope_id, external_id) DO NOTHING",
        (scope.user_id, scope.scope_id, at_ms, at_ms, session_ids, scope.user_id, scope.scope_id),
    )


LAYOUT = EpisodeLayout(
    order="seq",
    only_from=(
        "SELECT ms.memory_id FROM memory_sources ms WHERE ms.user_id = ? AND ms.episode_id = ?"
        " AND NOT EXISTS (SELECT 1 FROM memory_sources o WHERE o.user_id = ms.user_id"
        " AND o.memory_id = ms.memory_id AND o.episode_id <> ms.episode_id)"
    ),
    ensure_many=_ensure_many,
)
