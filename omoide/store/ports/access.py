"""Access tracking: counting the uses of memories and episodes, and finding what went unused.

``AccessReads`` is read outside a transaction (``store.access``); ``AccessWrites`` is used
inside one (``with store.transaction() as tx: tx.access.touch(...)``).

Tenant rule: every method takes a ``Scope`` and touches only that tenant's memories and
episodes, except ``tenant_activity``, an operator's view across tenants.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from omoide.types import Scope


@dataclass(frozen=True)
class TenantActivity:
    """A tenant's memories by use: how many, how many superseded (no longer valid), and how
    many inactive (last used, by an access or a change, before the cutoff asked for)."""

    scope: Scope
    total: int
    superseded: int
    inactive: int


class AccessReads(Protocol):
    """Which tenants and memories went unused, by their last access or change."""

    def tenant_activity(
        self, before_ms: int, user_id: str | None, scope_id: str | None
    ) -> list[TenantActivity]:
        """Each tenant of ``user_id`` / ``scope_id`` (``None``: any) that has memories, ordered
        by user then scope, with its counts; inactive means the later of the last access
        (``touch``) and the last change is before ``before_ms``. Global: an operator's view
        across tenants when ``user_id`` is None."""
        ...

    def inactive_memories(self, scope: Scope, before_ms: int, limit: int) -> list[str]:
        """Ids of up to ``limit`` of the tenant's memories inactive since ``before_ms`` (as in
        ``tenant_activity``), least recently used first, then by id."""
        ...


class AccessWrites(Protocol):
    """Access counters, in the caller's transaction."""

    def touch(
        self, scope: Scope, memory_ids: Sequence[str], episode_ids: Sequence[str], at_ms: int
    ) -> int:
        """Count one access at ``at_ms`` on each memory, on the episodes they come from, and
        on each episode given (each episode once); return how many memories and episodes
        changed. Increments in place: concurrent touches all count. Ids not the tenant's are
        ignored."""
        ...
