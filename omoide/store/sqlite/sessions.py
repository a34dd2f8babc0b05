"""How SQLite lays out episodes for the shared sessions port (``store.sql.sessions``).

Memory sources point at a memory's ``seq``, and a session's episodes keep their insertion
order in ``rowid``; ``ensure_sessions`` creates one session at a time (a statement costs no
round trip in-process).
"""

from __future__ import annotations

from omoide.store.sql.sessions import EpisodeLayout

LAYOUT = EpisodeLayout(
    order="rowid",
    only_from=(
        "SELECT m.id FROM memories m WHERE m.user_id = ? AND m.seq IN"
        " (SELECT ms.memory_seq FROM memory_sources ms WHERE ms.episode_id = ?"
        " AND NOT EXISTS (SELECT 1 FROM memory_sources o"
        " WHERE o.memory_seq = ms.memory_seq AND o.episode_id != ms.episode_id))"
    ),
    ensure_many=None,
)
