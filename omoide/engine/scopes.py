"""Operations on a ``scope_id`` across every user: deleting a scope for all of them at once.

Everything else in the engine works inside one tenant (``user_id`` + ``scope_id``). Deleting by
``scope_id`` alone removes that scope of every user, so this is the one engine operation that
spans tenants; interfaces must offer it only to a full-access caller.
"""

from __future__ import annotations

from collections.abc import Iterator

from omoide.store.ports.graph import GraphReads
from omoide.store.ports.memories import MemoryReads
from omoide.store.protocol import Transactions
from omoide.types import Scope
from omoide.validate import check_text

_SCAN_BATCH = 1000


class ScopeService:
    """``delete_scope_id``: delete one ``scope_id`` for every user.

        >>> m.delete_scope_id("demo")     # alice's and bob's "demo" tenants; "prod" untouched
        12

    The users are found by scanning the memories and entities of every tenant (the ``Store``
    protocol has no index of tenants), so the call costs one pass over those tables. A user whose
    ``scope_id`` holds only variables or sessions, with no memory or entity, is not found.
    """

    def __init__(
        self, memory_reads: MemoryReads, graph_reads: GraphReads, transactions: Transactions
    ) -> None:
        self._memory_reads = memory_reads
        self._graph_reads = graph_reads
        self._transactions = transactions

    def delete_scope_id(self, scope_id: str) -> int:
        """Delete the ``scope_id`` of every user (memories, sessions, history, jobs, variables,
        entities), in one transaction; return the number of memories deleted."""
        check_text(scope_id, 256, what="scope_id")
        users = sorted(self._users_in_scope(scope_id))
        with self._transactions.transaction() as tx:
            return sum(tx.admin.delete_scope(Scope(user_id=u, scope_id=scope_id)) for u in users)

    def list_scopes(self, user_id: str) -> list[str]:
        """The ``scope_id``s in which ``user_id`` has memories or entities, sorted (one pass
        over every tenant's memories and entities, as ``delete_scope_id``)."""
        check_text(user_id, 256, what="user_id")
        return sorted({s.scope_id for s in self._tenants(_SCAN_BATCH) if s.user_id == user_id})

    def _users_in_scope(self, scope_id: str) -> set[str]:
        return {scope.user_id for scope in self._tenants(_SCAN_BATCH) if scope.scope_id == scope_id}

    def _tenants(self, batch: int) -> Iterator[Scope]:
        for chunk in self._memory_reads.iter_memory_texts(batch):
            yield from (scope for scope, _, _ in chunk)
        for chunk in self._graph_reads.iter_entity_texts(batch):
            yield from (scope for scope, _, _ in chunk)
