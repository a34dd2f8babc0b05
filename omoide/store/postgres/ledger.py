"""How PostgreSQL keys chunk rows and memory sources for the shared ledger port
(``store.sql.ledger``).

Chunk rows and memory sources carry the tenant's ``user_id`` (the distribution key), episodes a
``seq``; its consolidation layout is ``consolidation.py``.
"""

from __future__ import annotations

from omoide.store.postgres import consolidation
from omoide.store.sql.ledger import LedgerLayout

LAYOUT = LedgerLayout(
    episode_order="seq",
    chunks_by_tenant=True,
    sources_join="m.user_id = ms.user_id AND m.id = ms.memory_id",
    consolidation=consolidation.LAYOUT,
)
