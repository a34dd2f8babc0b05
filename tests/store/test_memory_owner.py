"""Contract of ``MemoryReads.owner``: the tenant a memory id belongs to, for operations that
name only an id (mem0's ``get(memory_id)``)."""

from __future__ import annotations

from omoide.store.ports.memories import MemoryReads, MemoryWrites
from omoide.store.protocol import Store
from tests.store.contract import ALICE, ALICE_OTHER, BOB, add, covers


@covers(MemoryReads.owner, MemoryWrites.delete_memory)
def test_owner_names_the_tenant_of_an_id_across_tenants(store: Store) -> None:
    ids = {
        scope: add(store, scope, f"tea of {scope.user_id}") for scope in (ALICE, BOB, ALICE_OTHER)
    }
    for scope, memory_id in ids.items():
        assert store.memories.owner(memory_id) == scope
    assert store.memories.owner("no-such-id") is None
    with store.transaction() as tx:  # a deleted memory still names its tenant (its history)
        tx.memories.delete_memory(BOB, ids[BOB], "test")
    assert store.memories.owner(ids[BOB]) == BOB
