"""Contract of ``GraphReads`` / ``GraphWrites``: entities, relationships, traversal."""

from __future__ import annotations

import pytest

from omoide.errors import InvalidInput, NotFound
from omoide.store.ports.graph import GraphReads, GraphWrites
from omoide.store.protocol import Store
from omoide.types import Entity, Scope, entity_text
from tests.store.contract import (
    ALICE,
    ALICE_OTHER,
    BOB,
    OTHERS,
    covers,
    session_with_episodes,
    unit,
)


def entities(store: Store, scope: Scope, *names: str, at_ms: int = 1_000) -> list[Entity]:
    with store.transaction() as tx:
        return [
            tx.graph.upsert_entity(scope, name, "person", at_ms + i) for i, name in enumerate(names)
        ]


def link(store: Store, scope: Scope, *pairs: tuple[Entity, Entity]) -> None:
    with store.transaction() as tx:
        for a, b in pairs:
            tx.graph.upsert_relationship(scope, a.id, b.id, "knows", None, 1_000)


@covers(GraphWrites.upsert_entity, GraphReads.get_entity)
def test_upsert_entity_counts_mentions_of_one_name(store: Store) -> None:
    """One entity per name and tenant (issue 16, point 8): the first specific type stays."""
    [episode] = session_with_episodes(store, ALICE, "s1", ["Mei said hi"])
    with store.transaction() as tx:
        first = tx.graph.upsert_entity(ALICE, "Mei", "person", 1_000, episode_id=episode)
        again = tx.graph.upsert_entity(ALICE, "mei", "person", 5_000)  # names ignore case
        place = tx.graph.upsert_entity(ALICE, "Mei", "place", 2_000, source="user")
        theirs = tx.graph.upsert_entity(BOB, "Mei", "person", 1_000)
        vague = tx.graph.upsert_entity(ALICE, "Acme", "other", 1_000)
        known = tx.graph.upsert_entity(ALICE, "ACME", "organization", 1_000)
    assert again.id == first.id == place.id
    got = store.graph.get_entity(ALICE, first.id)
    assert (got.name, got.type, got.mention_count, got.episodes) == ("Mei", "person", 3, [episode])
    assert got.last_seen_at.timestamp() == 5.0 and place.source == "extraction"
    assert theirs.id != first.id and theirs.mention_count == 1
    assert known.id == vague.id and (known.name, known.type) == ("Acme", "organization")
    for bad in ("", "  "):
        with pytest.raises(InvalidInput), store.transaction() as tx:
            tx.graph.upsert_entity(ALICE, bad, "person", 1)


@covers(GraphWrites.upsert_entity)
def test_an_entity_links_only_an_episode_of_its_own_tenant(store: Store) -> None:
    [mine] = session_with_episodes(store, ALICE, "s", ["Mei moved"])
    [elsewhere] = session_with_episodes(store, ALICE_OTHER, "s", ["Mei moved"])
    for episode_id in ("", "no-such-episode", elsewhere):
        with pytest.raises(NotFound), store.transaction() as tx:
            tx.graph.upsert_entity(ALICE, "Mei", "person", 1, episode_id)
    assert store.graph.list_entities(ALICE, None, 10, 0) == ([], 0)  # rolled back whole
    with store.transaction() as tx:
        mei = tx.graph.upsert_entity(ALICE, "Mei", "person", 1, mine)
    assert store.graph.get_entity(ALICE, mei.id).name == "Mei"


@covers(GraphReads.get_entity, GraphWrites.delete_entity)
def test_entities_are_invisible_and_untouchable_from_another_tenant(store: Store) -> None:
    [mei] = entities(store, ALICE, "Mei")
    for other in OTHERS:
        with pytest.raises(NotFound):
            store.graph.get_entity(other, mei.id)
        with pytest.raises(NotFound), store.transaction() as tx:
            tx.graph.delete_entity(other, mei.id)
    assert store.graph.get_entity(ALICE, mei.id) == mei


@covers(GraphWrites.delete_entity, GraphReads.list_relationships)
def test_delete_entity_takes_its_relationships_and_vector(store: Store) -> None:
    mei, ken, ann = entities(store, ALICE, "Mei", "Ken", "Ann")
    link(store, ALICE, (mei, ken), (ken, ann))
    with store.transaction() as tx:
        tx.graph.put_entity_vector(ALICE, ken.id, unit(1, 0))
        tx.graph.delete_entity(ALICE, ken.id)
    with pytest.raises(NotFound):
        store.graph.get_entity(ALICE, ken.id)
    assert store.graph.list_relationships(ALICE, None, 10, 0) == ([], 0)
    assert store.graph.entity_vector_search(ALICE, unit(1, 0), 5) == []
    with pytest.raises(NotFound), store.transaction() as tx:
        tx.graph.delete_entity(ALICE, ken.id)


@covers(GraphReads.list_entities)
def test_list_entities_recent_first_filtered_with_total(store: Store) -> None:
    mei, ken = entities(store, ALICE, "Mei", "Ken", at_ms=1_000)
    with store.transaction() as tx:
        kyoto = tx.graph.upsert_entity(ALICE, "Kyoto", "place", 9_000)
    entities(store, BOB, "Bob")
    found, total = store.graph.list_entities(ALICE, None, 2, 0)
    assert total == 3 and [e.id for e in found] == [kyoto.id, ken.id]
    assert [e.id for e in store.graph.list_entities(ALICE, None, 2, 2)[0]] == [mei.id]
    assert store.graph.list_entities(ALICE, "place", 10, 0) == ([kyoto], 1)
    mentioned, count = store.graph.list_entities(ALICE, None, 10, 0, mentioned_in="ask MEI now")
    assert count == 1 and [e.id for e in mentioned] == [mei.id]
    assert store.graph.list_entities(ALICE_OTHER, None, 10, 0) == ([], 0)


@covers(GraphWrites.upsert_relationship, GraphReads.list_relationships)
def test_upsert_relationship_counts_mentions_and_keeps_the_first_notes(store: Store) -> None:
    mei, ken, ann = entities(store, ALICE, "Mei", "Ken", "Ann")
    with store.transaction() as tx:
        first = tx.graph.upsert_relationship(ALICE, mei.id, ken.id, "knows", "met at work", 1)
        again = tx.graph.upsert_relationship(ALICE, mei.id, ken.id, "knows", "other notes", 9)
        tx.graph.upsert_relationship(ALICE, ann.id, mei.id, "likes", None, 5)
    assert again.id == first.id and again.mention_count == 2
    assert (again.notes, again.from_name, again.to_name) == ("met at work", "Mei", "Ken")
    every, total = store.graph.list_relationships(ALICE, None, 10, 0)
    assert total == 2 and [r.label for r in every] == ["knows", "likes"]  # recent first
    touching_ken = store.graph.list_relationships(ALICE, ken.id, 10, 0)
    assert [r.id for r in touching_ken[0]] == [first.id] and touching_ken[1] == 1
    assert store.graph.list_relationships(ALICE, mei.id, 10, 0)[1] == 2  # either direction
    assert store.graph.list_relationships(BOB, None, 10, 0) == ([], 0)
    with pytest.raises(NotFound):
        store.graph.list_relationships(BOB, mei.id, 10, 0)


@covers(GraphWrites.upsert_relationship)
def test_a_relationship_cannot_reach_into_another_tenant(store: Store) -> None:
    [mei] = entities(store, ALICE, "Mei")
    [bob] = entities(store, BOB, "Bob")
    for a, b in ((mei.id, bob.id), (bob.id, mei.id), (mei.id, "no-such-entity")):
        with pytest.raises(NotFound), store.transaction() as tx:
            tx.graph.upsert_relationship(ALICE, a, b, "knows", None, 1)
    assert store.graph.list_relationships(ALICE, None, 10, 0) == ([], 0)


@covers(GraphReads.entity_vector_search, GraphWrites.put_entity_vector)
def test_entity_vector_search_by_cosine_within_the_tenant(store: Store) -> None:
    near, far = entities(store, ALICE, "Near", "Far")
    [theirs] = entities(store, BOB, "Theirs")
    with store.transaction() as tx:
        tx.graph.put_entity_vector(ALICE, near.id, unit(1, 0.1))
        tx.graph.put_entity_vector(ALICE, far.id, unit(0, 1))
        tx.graph.put_entity_vector(BOB, theirs.id, unit(1, 0))
        tx.graph.put_entity_vector(BOB, near.id, unit(1, 0))  # not Bob's: ignored
    hits = store.graph.entity_vector_search(ALICE, unit(1, 0), 5)
    assert [h[0] for h in hits] == [near.id, far.id] and hits[0][1] > hits[1][1]
    assert len(store.graph.entity_vector_search(ALICE, unit(1, 0), 1)) == 1
    assert [h[0] for h in store.graph.entity_vector_search(BOB, unit(1, 0), 5)] == [theirs.id]
    assert store.graph.entity_vector_search(ALICE, unit(1, 0, 0), 5) == []  # other dimension


@covers(GraphWrites.put_entity_vector)
def test_put_entity_vector_replaces_and_ignores_a_deleted_entity(store: Store) -> None:
    [mei] = entities(store, ALICE, "Mei")
    with store.transaction() as tx:
        tx.graph.put_entity_vector(ALICE, mei.id, unit(1, 0))
        tx.graph.put_entity_vector(ALICE, mei.id, unit(0, 1))
    [(hit, score)] = store.graph.entity_vector_search(ALICE, unit(0, 1), 5)
    assert hit == mei.id and score == pytest.approx(1.0, abs=1e-5)
    with store.transaction() as tx:
        tx.graph.delete_entity(ALICE, mei.id)
        tx.graph.put_entity_vector(ALICE, mei.id, unit(1, 0))
    assert store.graph.entity_vector_search(ALICE, unit(1, 0), 5) == []


@covers(GraphReads.iter_entity_texts)
def test_iter_entity_texts_yields_every_entity_once_as_its_embedding_text(
    store: Store,
) -> None:
    expected = {
        (scope, e.id, entity_text(e.name, e.type))
        for scope in (ALICE, BOB)
        for e in entities(store, scope, "Mei", "Ken", "Ann")
    }
    batches = list(store.graph.iter_entity_texts(4))
    assert [len(b) for b in batches] == [4, 2]
    assert {row for batch in batches for row in batch} == expected


@covers(GraphReads.neighborhood)
def test_neighborhood_walks_both_ways_to_the_depth_and_survives_cycles(store: Store) -> None:
    a, b, c, d = entities(store, ALICE, "A", "B", "C", "D")
    link(store, ALICE, (a, b), (c, b), (c, d), (d, a))  # a cycle a-b-c-d-a
    graph = store.graph.neighborhood(ALICE, a.id, 1, 10)
    assert {(n.name, n.depth) for n in graph.nodes} == {("A", 0), ("B", 1), ("D", 1)}
    assert {(e.from_name, e.to_name) for e in graph.edges} == {("A", "B"), ("D", "A")}
    assert not graph.truncated
    whole = store.graph.neighborhood(ALICE, a.id, 5, 10)
    assert [(n.name, n.depth) for n in whole.nodes] == [("A", 0), ("B", 1), ("D", 1), ("C", 2)]
    assert len(whole.edges) == 4
    cut = store.graph.neighborhood(ALICE, a.id, 5, 2)
    assert cut.truncated and len(cut.nodes) == 2


@covers(GraphReads.neighborhood)
def test_neighborhood_never_leaves_the_tenant(store: Store) -> None:
    [mei] = entities(store, ALICE, "Mei")
    with pytest.raises(NotFound):
        store.graph.neighborhood(BOB, mei.id, 2, 10)
    [bob] = entities(store, BOB, "Bob")
    graph = store.graph.neighborhood(ALICE, mei.id, 3, 10)
    assert [n.id for n in graph.nodes] == [mei.id] and graph.edges == []
    assert bob.id not in {n.id for n in graph.nodes}


@covers(GraphReads.neighbors)
def test_neighbors_are_the_seeds_and_everything_one_edge_away(store: Store) -> None:
    a, b, c, d = entities(store, ALICE, "A", "B", "C", "D")
    [theirs] = entities(store, BOB, "Theirs")
    link(store, ALICE, (a, b), (b, c), (c, d))
    graph = store.graph.neighbors(ALICE, [b.id, theirs.id], 10)  # Bob's id is ignored
    assert [(n.name, n.depth) for n in graph.nodes] == [("B", 0), ("A", 1), ("C", 1)]
    assert {(e.from_name, e.to_name) for e in graph.edges} == {("A", "B"), ("B", "C")}
    assert not graph.truncated
    cut = store.graph.neighbors(ALICE, [b.id], 2)
    kept = {n.id for n in cut.nodes}
    assert cut.truncated and cut.nodes[0].name == "B" and len(cut.nodes) == 2
    assert all(e.from_id in kept and e.to_id in kept for e in cut.edges)
    assert store.graph.neighbors(BOB, [a.id], 10).nodes == []


@covers(GraphReads.find_entities)
def test_find_entities_by_name_in_text_most_mentioned_first(store: Store) -> None:
    mei, ken = entities(store, ALICE, "Mei", "Ken")
    entities(store, ALICE, "Ken")  # a second mention
    entities(store, BOB, "Mei")
    found = store.graph.find_entities(ALICE, "did MEI call ken?", 10)
    assert [e.id for e in found] == [ken.id, mei.id]
    assert len(store.graph.find_entities(ALICE, "did MEI call ken?", 1)) == 1
    assert store.graph.find_entities(ALICE, "Me", 10) == []
    assert [e.id for e in store.graph.find_entities(ALICE, "Me", 10, contained=True)] == [mei.id]
    assert store.graph.find_entities(ALICE_OTHER, "Mei", 10) == []
