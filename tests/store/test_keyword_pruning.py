"""Frequent-term pruning of keyword search, the same on both backends, per tenant.

Once a tenant holds 2,000 memories, a term in 30% or more of them is not ranked next to a
rarer one (its IDF is small; ranking its postings costs most of the time): the rarer term
decides which memories are found, and the pruned term still counts in the scores of the best
of them (``pruning.rescore``).
"""

from __future__ import annotations

from omoide.store.ports.memories import MemoryReads, NewMemory
from omoide.store.protocol import Store
from omoide.types import Scope, SearchFilters
from tests.store.contract import ALICE, BOB, covers


def _fill(store: Store, scope: Scope, texts: list[str]) -> list[str]:
    with store.transaction() as tx:
        return [
            i.id for i in tx.memories.insert_memories(scope, [NewMemory(t) for t in texts], "t")
        ]


def _ids(store: Store, scope: Scope, terms: list[str]) -> list[str]:
    return [h[0] for h in store.memories.keyword_search(scope, terms, SearchFilters(), 10)]


@covers(MemoryReads.keyword_search)
def test_a_term_in_most_of_a_large_tenant_is_not_ranked_beside_a_rare_one(store: Store) -> None:
    _fill(store, ALICE, [f"walrus sighting number {i}" for i in range(1_200)])
    _fill(store, ALICE, [f"plain note number {i}" for i in range(800)])
    [rare] = _fill(store, ALICE, ["walrus next to a narwhal"])
    assert _ids(store, ALICE, ["walrus", "narwhal"]) == [rare]
    assert len(_ids(store, ALICE, ["walrus"])) == 10  # alone, a common term is still searched


@covers(MemoryReads.keyword_search)
def test_pruning_uses_the_tenants_own_frequencies(store: Store) -> None:
    _fill(store, BOB, [f"walrus sighting number {i}" for i in range(2_100)])
    mine = _fill(store, ALICE, ["walrus on the beach", "walrus and narwhal"])
    # alice has two memories: nothing is pruned for her, whatever bob stored
    assert sorted(_ids(store, ALICE, ["walrus", "narwhal"])) == sorted(mine)
    assert _ids(store, ALICE, ["walrus", "narwhal"])[0] == mine[1]


@covers(MemoryReads.keyword_search)
def test_a_pruned_term_still_counts_in_the_best_hits_scores(store: Store) -> None:
    _fill(store, ALICE, [f"walrus sighting number {i}" for i in range(700)])  # 35%: pruned
    _fill(store, ALICE, [f"plain note number {i}" for i in range(1_300)])
    plain, both = _fill(store, ALICE, ["a narwhal swims here", "a walrus meets narwhal"])
    alone = store.memories.keyword_search(ALICE, ["narwhal"], SearchFilters(), 10)
    assert alone[0][1] == alone[1][1]  # equal by the rare term alone (same length)
    hits = store.memories.keyword_search(ALICE, ["walrus", "narwhal"], SearchFilters(), 10)
    assert [h[0] for h in hits] == [both, plain]  # only the rare term's matches are found
    assert hits[0][1] > alone[0][1] + 0.3 and abs(hits[1][1] - alone[1][1]) < 1e-9
