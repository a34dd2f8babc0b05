"""How PostgreSQL keys chunk rows for the shared chunks port (``store.sql.chunks``).

Chunk rows carry the tenant's ``user_id`` (the distribution key), and episodes a ``seq``.
"""

from __future__ import annotations

from omoide.store.sql.chunks import ChunkLayout

LAYOUT = ChunkLayout(episode_order="seq", chunks_by_tenant=True)
