"""How PostgreSQL links memories to their episodes for the shared access port
(``store.sql.access``): memory sources carry the tenant's ``user_id`` (the distribution key)
and the memory's id."""

from __future__ import annotations

from omoide.store.sql.access import AccessLayout

LAYOUT = AccessLayout(sources_join="m.user_id = ms.user_id AND m.id = ms.memory_id")
