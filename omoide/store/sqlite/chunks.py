"""How SQLite keys chunk rows for the shared chunks port (``store.sql.chunks``).

Chunk rows name their session only (its row id is the tenant's), and a session's episodes keep
their insertion order in ``rowid``.
"""

from __future__ import annotations

from omoide.store.sql.chunks import ChunkLayout

LAYOUT = ChunkLayout(episode_order="rowid", chunks_by_tenant=False)
