"""Contract of ``MemoryReads``: lookups, listings, keyword and vector search, history."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from omoide.errors import InvalidInput, NotFound
from omoide.store.ports.memories import MemoryReads, MemoryWrites, NewMemory
from omoide.store.protocol import Store
from omoide.types import UNNAMED_SESSION, HistoryEvent, MemoryType, Scope, SearchFilters
from tests.store.contract import (
    ALICE,
    ALICE_OTHER,
    BOB,
    OTHERS,
    Backend,
    add,
    covers,
    session_with_episodes,
    unit,
)


@covers(MemoryReads.get_memories, MemoryWrites.insert_memory)
def test_insert_then_get_returns_the_memory(store: Store) -> None:
    memory_id = add(store, ALICE, "I like jasmine tea", metadata={"k": 1})
    [item] = store.memories.get_memories(ALICE, [memory_id])
    assert (item.text, item.metadata, item.type) == ("I like jasmine tea", {"k": 1}, MemoryType.RAW)
    assert (item.user_id, item.scope_id) == (ALICE.user_id, ALICE.scope_id)
    assert item.invalid_at is None and not item.embedded


@covers(MemoryReads.get_memories)
def test_get_memories_keeps_the_asked_order_and_skips_unknown_ids(store: Store) -> None:
    first, second, third = (add(store, ALICE, f"memory {i}") for i in range(3))
    got = store.memories.get_memories(ALICE, [third, "no-such-id", first, second])
    assert [m.id for m in got] == [third, first, second]
    assert store.memories.get_memories(ALICE, []) == []


@covers(MemoryReads.get_memories)
def test_get_memories_takes_more_ids_than_a_query_has_parameters(store: Store) -> None:
    with store.transaction() as tx:
        ids = [
            tx.memories.insert_memory(ALICE, NewMemory(text=f"m{i}"), "t").id for i in range(1200)
        ]
    wanted = ids[::-1]
    assert [m.id for m in store.memories.get_memories(ALICE, wanted)] == wanted


@covers(MemoryReads.texts_and_times)
def test_texts_and_times_are_the_tenants_own_and_skip_unknown_ids(store: Store) -> None:
    mine = add(store, ALICE, "Caroline: hi", created_at_ms=7_000)
    theirs = add(store, BOB, "Melanie: hello", created_at_ms=8_000)
    with store.transaction() as tx:
        many = [
            tx.memories.insert_memory(ALICE, NewMemory(text=f"m{i}"), "t").id for i in range(600)
        ]
    got = store.memories.texts_and_times(ALICE, [mine, theirs, "no-such-id", *many])
    assert got[mine] == (
        "Caroline: hi",
        7_000,
        False,
        False,
        None,
    )  # standalone: no session, no context
    assert theirs not in got and "no-such-id" not in got
    assert len(got) == 601
    assert store.memories.texts_and_times(ALICE, []) == {}
    # a turn of a session; a message linked to its neighbours without a session is not
    with store.transaction() as tx:
        tx.sessions.ensure_sessions(ALICE, ["s1"])
        in_session = tx.memories.insert_memory(ALICE, NewMemory("a", session_id="s1"), "t").id
        linked = tx.memories.insert_memory(ALICE, NewMemory("b", context="a"), "t").id
        blank = tx.memories.insert_memory(ALICE, NewMemory("c", context=" "), "t").id
        # a fact extracted from the session keeps its session but is not one of its turns
        fact = NewMemory("d", type=MemoryType.SEMANTIC, session_id="s1")
        derived = tx.memories.insert_memory(ALICE, fact, "t").id
    turns = store.memories.texts_and_times(ALICE, [in_session, linked, blank, derived])
    assert [turns[i].turn for i in (in_session, linked, blank, derived)] == [
        True,
        False,
        False,
        False,
    ]
    # who said it: an assistant's message, not a user's, nor a memory without a role
    with store.transaction() as tx:
        said = [
            tx.memories.insert_memory(ALICE, NewMemory(t, metadata={"role": r}), "t").id
            for t, r in (("hi", "user"), ("hello!", "assistant"), ("odd", "Assistant"))
        ]
    roles = store.memories.texts_and_times(ALICE, [*said, mine])
    assert [roles[i].assistant for i in [*said, mine]] == [False, True, False, False]


def test_a_message_in_the_unnamed_session_is_not_a_turn(store: Store) -> None:
    """Doors file a message whose client named no session under ``UNNAMED_SESSION``: what
    accumulates there is one fact per call as often as a conversation, so it is scored as a
    standalone memory; the same session name of another tenant changes nothing."""
    with store.transaction() as tx:
        tx.sessions.ensure_sessions(ALICE, [UNNAMED_SESSION, "chat-1"])
        tx.sessions.ensure_sessions(BOB, ["chat-1"])
        unnamed = tx.memories.insert_memory(ALICE, NewMemory("a", session_id=UNNAMED_SESSION), "t")
        named = tx.memories.insert_memory(ALICE, NewMemory("b", session_id="chat-1"), "t")
        bobs = tx.memories.insert_memory(BOB, NewMemory("c", session_id="chat-1"), "t")
    got = store.memories.texts_and_times(ALICE, [unnamed.id, named.id])
    assert (got[unnamed.id].turn, got[named.id].turn) == (False, True)
    assert store.memories.texts_and_times(BOB, [bobs.id])[bobs.id].turn


@covers(MemoryReads.texts_and_times)
def test_texts_and_times_read_each_memorys_cosine_to_a_query(store: Store) -> None:
    """A search scores a keyword hit outside the vector list by its own cosine, read with its
    text: equal to the cosine the vector search gives, None without a vector of the query's
    size; another tenant's vector is never read."""
    near, far, bare, other_model = (add(store, ALICE, t) for t in ("near", "far", "bare", "x"))
    bobs = add(store, BOB, "bob's")
    with store.transaction() as tx:
        tx.memories.put_vector(ALICE, near, unit(1, 1, 0))
        tx.memories.put_vector(ALICE, far, unit(-1, 0, 0))
        tx.memories.put_vector(ALICE, other_model, unit(1, 0))
        tx.memories.put_vector(BOB, bobs, unit(1, 0, 0))
    query = unit(1, 0, 0)
    got = store.memories.texts_and_times(ALICE, [near, far, bare, other_model, bobs], query)
    listed = dict(store.memories.vector_search(ALICE, query, SearchFilters(), 10))
    assert got[near].cosine == pytest.approx(listed[near]) == pytest.approx(0.5**0.5)
    assert got[far].cosine == pytest.approx(listed[far]) == pytest.approx(-1.0)
    assert (got[bare].cosine, got[other_model].cosine) == (None, None)
    assert bobs not in got
    assert store.memories.texts_and_times(ALICE, [near])[near].cosine is None  # not asked


@covers(MemoryReads.candidates)
def test_candidates_are_the_texts_and_times_and_hold_the_memories(store: Store) -> None:
    """What a search scores its candidates by, and its hits' whole memories from the same
    read: each as ``texts_and_times`` and ``get_memories`` read them alone."""
    [episode] = session_with_episodes(store, ALICE, "s1", ["a"])
    metadata = {"k": 1, "f": 0.1, "big": 2**62, "s": 'caf\u00e9 "q"', "n": None, "l": [1, {}]}
    near = add(store, ALICE, "near", metadata=metadata, created_at_ms=7_000)
    turn = add(store, ALICE, "a turn", session_id="s1", source_episodes=[episode])
    bare, other_model = add(store, ALICE, "bare"), add(store, ALICE, "x")
    bobs = add(store, BOB, "bob's")
    with store.transaction() as tx:
        tx.memories.put_vector(ALICE, near, unit(1, 1, 0))
        tx.memories.put_vector(ALICE, turn, unit(-1, 0, 0))
        tx.memories.put_vector(ALICE, other_model, unit(1, 0))
    asked = [near, turn, bare, other_model, bobs, "no-such-id"]
    query = unit(1, 0, 0)
    read = store.memories.candidates(ALICE, asked, query)
    assert dict(read) == store.memories.texts_and_times(ALICE, asked, query)
    assert read.asked == set(asked)
    wanted = [bare, "no-such-id", turn, bobs, near, other_model]
    alone = store.memories.get_memories(ALICE, wanted)
    assert read.memories(wanted) == alone and [m.id for m in alone] == [
        bare, turn, near, other_model
    ]  # fmt: skip
    assert (alone[1].source_episodes, alone[1].session_id, alone[2].metadata) == (
        [episode],
        "s1",
        metadata,
    )
    assert [m.embedded for m in alone] == [False, True, True, True]
    assert read.memories([]) == [] and store.memories.candidates(ALICE, [], None) == {}


@pytest.mark.parametrize("other", OTHERS)
@covers(
    MemoryReads.get_memories,
    MemoryReads.list_memories,
    MemoryReads.latest_memories,
    MemoryReads.keyword_search,
    MemoryReads.vector_search,
    MemoryReads.history,
    MemoryWrites.delete_memory,
)
def test_no_read_crosses_tenants(store: Store, other: Scope) -> None:
    memory_id = add(store, ALICE, "secret tea preference")
    with store.transaction() as tx:
        tx.memories.put_vector(ALICE, memory_id, unit(1, 0, 0))
    assert store.memories.get_memories(other, [memory_id]) == []
    assert store.memories.list_memories(other, SearchFilters(), 10, 0) == ([], 0)
    assert store.memories.latest_memories(other, SearchFilters(), 10) == []
    assert store.memories.keyword_search(other, ["tea"], SearchFilters(), 10) == []
    assert store.memories.vector_search(other, unit(1, 0, 0), SearchFilters(), 10) == []
    with pytest.raises(NotFound):
        store.memories.history(other, memory_id)
    with pytest.raises(NotFound), store.transaction() as tx:
        tx.memories.delete_memory(other, memory_id, "test")
    assert store.memories.get_memories(ALICE, [memory_id])


@covers(MemoryReads.list_memories)
def test_list_returns_page_and_true_total(store: Store) -> None:
    for i in range(7):
        add(store, ALICE, f"memory number {i}")
    add(store, BOB, "bob's memory")
    items, total = store.memories.list_memories(ALICE, SearchFilters(), 3, 3)
    assert total == 7 and len(items) == 3
    texts = [i.text for i in items]
    assert texts == ["memory number 3", "memory number 2", "memory number 1"]


@covers(MemoryReads.list_memories)
def test_list_filters_by_type_session_metadata_and_creation_time(store: Store) -> None:
    with store.transaction() as tx:
        tx.sessions.ensure_session(ALICE, "s1")
    in_session = add(store, ALICE, "in the session", session_id="s1", metadata={"lang": "en"})
    fact = add(store, ALICE, "a fact", type=MemoryType.SEMANTIC, metadata={"lang": "fr"})
    old = add(store, ALICE, "an old one", created_at_ms=1_000)

    def ids(**filters: object) -> list[str]:
        found, total = store.memories.list_memories(ALICE, SearchFilters(**filters), 10, 0)
        assert total == len(found)
        return [m.id for m in found]

    assert ids(session_id="s1") == [in_session]
    assert ids(types=[MemoryType.SEMANTIC]) == [fact]
    assert ids(metadata={"lang": "fr"}) == [fact]
    assert ids(created_before=datetime(1971, 1, 1, tzinfo=UTC)) == [old]
    assert old not in ids(created_after=datetime(1971, 1, 1, tzinfo=UTC))
    assert ids(session_id="no-such-session") == []


@covers(MemoryReads.list_memories, MemoryWrites.insert_memory)
def test_validity_filters(store: Store) -> None:
    with store.transaction() as tx:
        tx.memories.insert_memory(ALICE, NewMemory(text="valid tea fact", valid_from_ms=1000), "t")
    items, total = store.memories.list_memories(ALICE, SearchFilters(), 10, 0)
    assert total == 1 and items[0].valid_from.timestamp() == 1.0


@covers(MemoryReads.latest_memories)
def test_latest_memories_are_the_newest_matches_newest_first(store: Store) -> None:
    ids = [add(store, ALICE, f"note {i}") for i in range(5)]
    add(store, ALICE, "a fact", type=MemoryType.SEMANTIC)
    latest = store.memories.latest_memories(ALICE, SearchFilters(types=[MemoryType.RAW]), 3)
    assert [m.id for m in latest] == [ids[4], ids[3], ids[2]]
    page, _ = store.memories.list_memories(ALICE, SearchFilters(types=[MemoryType.RAW]), 3, 0)
    assert [m.id for m in page] == [m.id for m in latest]


@covers(MemoryReads.keyword_search)
def test_keyword_search_ranks_and_survives_fts_syntax(store: Store) -> None:
    add(store, ALICE, "jasmine tea every morning")
    add(store, ALICE, "coffee at night")
    hits = store.memories.keyword_search(ALICE, ["jasmine", "tea"], SearchFilters(), 10)
    assert len(hits) == 1
    for nasty in ['"', "AND", "NEAR(", "*", "tea OR", "col:tea", "'", "(", "^"]:
        store.memories.keyword_search(ALICE, [nasty], SearchFilters(), 10)


@covers(MemoryReads.keyword_search)
def test_keyword_search_is_best_first_with_higher_scores_better(store: Store) -> None:
    both = add(store, ALICE, "jasmine tea in the garden")
    one = add(store, ALICE, "tea in the garden today")
    add(store, ALICE, "nothing relevant here at all")
    hits = store.memories.keyword_search(ALICE, ["jasmine", "tea"], SearchFilters(), 10)
    assert [h[0] for h in hits] == [both, one]
    assert hits[0][1] > hits[1][1] > 0
    assert len(store.memories.keyword_search(ALICE, ["tea"], SearchFilters(), 1)) == 1
    assert store.memories.keyword_search(ALICE, [], SearchFilters(), 10) == []


@covers(MemoryReads.keyword_search, MemoryWrites.insert_memory)
def test_keyword_search_finds_the_context_column_but_ranks_it_below_the_text(
    store: Store,
) -> None:
    """The neighbour context is searchable with a lower weight than the memory's own text."""
    in_text = add(store, ALICE, "we drank jasmine on the porch")
    in_context = add(store, ALICE, "we drank coffee on the porch", context="jasmine")
    hits = store.memories.keyword_search(ALICE, ["jasmine"], SearchFilters(), 10)
    assert [h[0] for h in hits] == [in_text, in_context]


@covers(MemoryReads.keyword_search, MemoryReads.vector_search)
def test_searches_skip_invalid_memories_unless_asked(store: Store) -> None:
    memory_id = add(store, ALICE, "oolong tea is best")
    with store.transaction() as tx:
        tx.memories.put_vector(ALICE, memory_id, unit(1, 0))
        tx.memories.invalidate_memory(ALICE, memory_id, 5_000, "test")
    assert store.memories.keyword_search(ALICE, ["oolong"], SearchFilters(), 5) == []
    assert store.memories.vector_search(ALICE, unit(1, 0), SearchFilters(), 5) == []
    every = SearchFilters(include_invalid=True)
    assert [h[0] for h in store.memories.keyword_search(ALICE, ["oolong"], every, 5)] == [memory_id]
    assert [h[0] for h in store.memories.vector_search(ALICE, unit(1, 0), every, 5)] == [memory_id]


@covers(MemoryReads.vector_search, MemoryWrites.put_vector)
def test_vector_search_orders_by_cosine_and_respects_filters(store: Store) -> None:
    ids = {}
    for name, vec, kind in [
        ("a", unit(1, 0, 0), MemoryType.RAW),
        ("b", unit(0.9, 0.1, 0), MemoryType.SEMANTIC),
        ("c", unit(0, 1, 0), MemoryType.RAW),
    ]:
        ids[name] = add(store, ALICE, f"memory {name}", type=kind)
        with store.transaction() as tx:
            tx.memories.put_vector(ALICE, ids[name], vec)
    hits = store.memories.vector_search(ALICE, unit(1, 0, 0), SearchFilters(), 3)
    assert [h[0] for h in hits] == [ids["a"], ids["b"], ids["c"]]
    assert hits[0][1] == pytest.approx(1.0, abs=1e-5)
    only_raw = store.memories.vector_search(
        ALICE, unit(1, 0, 0), SearchFilters(types=[MemoryType.RAW]), 3
    )
    assert [h[0] for h in only_raw] == [ids["a"], ids["c"]]
    assert len(store.memories.vector_search(ALICE, unit(1, 0, 0), SearchFilters(), 1)) == 1


@covers(MemoryReads.vector_search)
def test_a_query_vector_of_another_dimension_is_invalid_input(store: Store) -> None:
    memory_id = add(store, ALICE, "tea")
    with store.transaction() as tx:
        tx.memories.put_vector(ALICE, memory_id, unit(1, 0, 0))
    with pytest.raises(InvalidInput):
        store.memories.vector_search(ALICE, unit(1, 0), SearchFilters(), 5)
    assert store.memories.vector_search(BOB, unit(1, 0), SearchFilters(), 5) == []  # no vectors


@covers(MemoryReads.vector_search, MemoryWrites.put_vector, MemoryWrites.delete_memory)
def test_vector_search_sees_another_handles_writes_at_once(store: Store, backend: Backend) -> None:
    """Another process's committed vector is found, and its deletes are never served, by a
    handle that searched (and so may have cached) before."""
    other = backend.open()
    first = add(store, ALICE, "first")
    with store.transaction() as tx:
        tx.memories.put_vector(ALICE, first, unit(1, 0))
    assert [h[0] for h in store.memories.vector_search(ALICE, unit(1, 0), SearchFilters(), 5)] == [
        first
    ]
    second = add(other, ALICE, "second")
    with other.transaction() as tx:
        tx.memories.put_vector(ALICE, second, unit(0, 1))
        tx.memories.put_vector(ALICE, first, unit(0.5, 0.5))  # re-embedded elsewhere
    hits = store.memories.vector_search(ALICE, unit(0, 1), SearchFilters(), 5)
    assert [h[0] for h in hits] == [second, first]
    assert hits[1][1] == pytest.approx(float(unit(0.5, 0.5) @ unit(0, 1)), abs=1e-5)
    with other.transaction() as tx:
        tx.memories.delete_memory(ALICE, second, "t")
    assert [h[0] for h in store.memories.vector_search(ALICE, unit(0, 1), SearchFilters(), 5)] == [
        first
    ]


@covers(MemoryReads.vector_search)
def test_vector_search_fills_the_limit_past_filtered_rows(store: Store) -> None:
    """Rows the filters drop do not eat into the limit."""
    wanted = add(store, ALICE, "the one fact", type=MemoryType.SEMANTIC)
    with store.transaction() as tx:
        tx.memories.put_vector(ALICE, wanted, unit(0, 1))
        for i in range(40):
            raw = tx.memories.insert_memory(ALICE, NewMemory(text=f"raw {i}"), "t")
            tx.memories.put_vector(ALICE, raw.id, unit(1, i / 100))
    hits = store.memories.vector_search(
        ALICE, unit(1, 0), SearchFilters(types=[MemoryType.SEMANTIC]), 1
    )
    assert [h[0] for h in hits] == [wanted]


@covers(MemoryReads.history)
def test_history_is_oldest_first_and_shared_by_all_versions(store: Store) -> None:
    first = add(store, ALICE, "lives in Osaka")
    with store.transaction() as tx:
        second = tx.memories.supersede_memory(
            ALICE, first, NewMemory(text="lives in Kyoto"), 10_000, "test"
        )
        tx.memories.update_memory(ALICE, second.id, None, {"checked": True}, "test")
    for memory_id in (first, second.id):
        entries = store.memories.history(ALICE, memory_id)
        assert [e.event for e in entries] == [
            HistoryEvent.ADD,
            HistoryEvent.UPDATE,
            HistoryEvent.UPDATE,
        ]
        assert (entries[1].old_text, entries[1].new_text) == ("lives in Osaka", "lives in Kyoto")
        assert [e.id for e in entries] == sorted(e.id for e in entries)
    with pytest.raises(NotFound):
        store.memories.history(ALICE, "no-such-id")


@covers(MemoryReads.iter_memory_texts)
def test_iter_memory_texts_yields_every_memory_of_every_tenant_once(store: Store) -> None:
    expected = set()
    for scope in (ALICE, BOB, ALICE_OTHER):
        for i in range(3):
            text = f"{scope.user_id}/{scope.scope_id} {i}"
            expected.add((scope, add(store, scope, text), text))
    gone = add(store, ALICE, "no longer true, still indexed")
    with store.transaction() as tx:
        tx.memories.invalidate_memory(ALICE, gone, 1, "t")
    expected.add((ALICE, gone, "no longer true, still indexed"))  # as_of searches need it
    batches = list(store.memories.iter_memory_texts(2))
    assert all(1 <= len(b) <= 2 for b in batches)
    seen = [row for batch in batches for row in batch]
    assert len(seen) == len(expected) and set(seen) == expected


# Keys a JSON path cannot name as written: non-ASCII (stored escaped), quotes, backslashes,
# control characters, path syntax. Each must match its own memory on both backends.
ODD_KEYS = ["类别", "é", 'a"b', "a\\b", '"];drop', "a\tb", "a.b", "$[0]", "a b"]


@covers(MemoryReads.list_memories, MemoryReads.keyword_search, MemoryReads.vector_search)
def test_metadata_filters_match_any_key_exactly(store: Store) -> None:
    ids = {
        key: add(store, ALICE, f"odd key tea {i}", metadata={key: "v"})
        for i, key in enumerate(ODD_KEYS)
    }
    with store.transaction() as tx:
        for memory_id in ids.values():
            tx.memories.put_vector(ALICE, memory_id, unit(1, 0, 0))
    for key, memory_id in ids.items():
        only = SearchFilters(metadata={key: "v"})
        found, total = store.memories.list_memories(ALICE, only, 50, 0)
        assert [m.id for m in found] == [memory_id] and total == 1, key
        assert [i for i, _ in store.memories.keyword_search(ALICE, ["tea"], only, 50)] == [
            memory_id
        ], key
        near = store.memories.vector_search(ALICE, unit(1, 0, 0), only, 50)
        assert [i for i, _ in near] == [memory_id], key
        absent = SearchFilters(metadata={key: None})
        found, total = store.memories.list_memories(ALICE, absent, 50, 0)
        assert memory_id not in {m.id for m in found} and total == len(ODD_KEYS) - 1, key
