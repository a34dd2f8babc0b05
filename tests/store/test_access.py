"""Contract of ``AccessReads`` / ``AccessWrites``: counting accesses, and which tenants and
memories went unused (the expired-memory maintenance), on both backends."""

from __future__ import annotations

import pytest

from omoide.store.ports.access import AccessReads, AccessWrites, TenantActivity
from omoide.store.ports.consolidation import ConsolidationReads
from omoide.store.protocol import Store
from omoide.types import Scope, now_ms
from tests.store.contract import ALICE, ALICE_OTHER, BOB, OTHERS, add, covers, session_with_episodes


@covers(AccessWrites.touch, ConsolidationReads.episode_stats)
def test_touch_counts_an_access_of_memories_and_their_episodes(store: Store) -> None:
    first, second = session_with_episodes(store, ALICE, "s1", ["a"], ["b"])
    memory_id = add(store, ALICE, "from the first", session_id="s1", source_episodes=[first])
    with store.transaction() as tx:
        assert tx.access.touch(ALICE, [memory_id], [], 7_000) == 2  # the memory and its source
        assert tx.access.touch(ALICE, [], [second], 8_000) == 1
        assert tx.access.touch(ALICE, [memory_id, "no-such-id"], [first], 9_000) == 2
    [item] = store.memories.get_memories(ALICE, [memory_id])
    assert item.access_count == 2 and item.last_accessed_at is not None
    stats = {s.episode_id: s for s in store.consolidation.episode_stats(ALICE, "s1")}
    assert (stats[first].access_count, stats[first].last_accessed_ms) == (2, 9_000)
    assert (stats[second].access_count, stats[second].last_accessed_ms) == (1, 8_000)


@pytest.mark.parametrize("other", OTHERS)
@covers(AccessWrites.touch)
def test_touch_never_counts_another_tenants_rows(store: Store, other: Scope) -> None:
    [episode] = session_with_episodes(store, ALICE, "s1", ["a"])
    memory_id = add(store, ALICE, "alice's", session_id="s1", source_episodes=[episode])
    with store.transaction() as tx:
        assert tx.access.touch(other, [memory_id], [episode], 5_000) == 0
    assert store.memories.get_memories(ALICE, [memory_id])[0].access_count == 0
    assert store.consolidation.episode_stats(ALICE, "s1")[0].access_count == 0


@covers(AccessReads.tenant_activity, AccessWrites.touch)
def test_tenant_activity_counts_inactive_by_last_access_or_change(store: Store) -> None:
    used, idle, old = (add(store, ALICE, t) for t in ("used", "idle", "old"))
    add(store, BOB, "bob's")
    add(store, ALICE_OTHER, "other")
    later = now_ms() + 10_000_000
    with store.transaction() as tx:
        tx.access.touch(ALICE, [used], [], later)
        tx.memories.invalidate_memory(ALICE, old, now_ms(), "t")
    everyone = store.access.tenant_activity(later, None, None)
    assert everyone == [
        TenantActivity(ALICE, total=3, superseded=1, inactive=2),
        TenantActivity(ALICE_OTHER, total=1, superseded=0, inactive=1),
        TenantActivity(BOB, total=1, superseded=0, inactive=1),
    ]
    assert store.access.tenant_activity(later, "alice", "demo") == everyone[:1]
    assert [a.scope for a in store.access.tenant_activity(later, None, "demo")] == [ALICE, BOB]
    assert store.access.tenant_activity(0, "bob", None) == [TenantActivity(BOB, 1, 0, 0)]
    assert store.access.tenant_activity(later, "nobody", None) == []
    assert idle


@covers(AccessReads.inactive_memories)
def test_inactive_memories_least_recently_used_first(store: Store) -> None:
    first, second, third = (add(store, ALICE, t) for t in ("a", "b", "c"))
    add(store, BOB, "bob's")
    base = now_ms() + 1_000_000
    with store.transaction() as tx:
        tx.access.touch(ALICE, [first], [], base + 2)
        tx.access.touch(ALICE, [second], [], base + 1)
    found = store.access.inactive_memories(ALICE, base + 10, 10)
    assert found[0] == third and found[1:] == [second, first]
    assert store.access.inactive_memories(ALICE, base + 10, 1) == [third]
    assert store.access.inactive_memories(ALICE, base + 2, 10) == [third, second]
    assert store.access.inactive_memories(ALICE, 0, 10) == []
