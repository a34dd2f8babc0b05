"""How SQLite links memories to their episodes for the shared access port
(``store.sql.access``): memory sources point at a memory's ``seq``."""

from __future__ import annotations

from omoide.store.sql.access import AccessLayout

LAYOUT = AccessLayout(sources_join="m.seq = ms.memory_seq")
