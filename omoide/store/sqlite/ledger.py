"""How SQLite keys chunk rows and memory sources for the shared ledger port (``store.sql.ledger``).

Chunk rows name their session only (its row id is the tenant's), memory sources point at a
memory's ``seq``, a session's episodes keep their insertion order in ``rowid``; the
consolidation layout is ``consolidation.py``.
"""

from __future__ import annotations

from omoide.store.sql.ledger import LedgerLayout
from omoide.store.sqlite import consolidation

LAYOUT = LedgerLayout(
    episode_order="rowid",
    chunks_by_tenant=False,
    sources_join="m.seq = ms.memory_seq",
    consolidation=consolidation.LAYOUT,
)
