"""PostgreSQL's in-process posting lists (store/postgres/postings.py) rank as the statement does.

Every check compares the ranking of a store whose cache has been warm through the writes with
the ranking ``fts.search`` (one SQL statement) gives at that moment: ids, order and scores,
exactly. Writes come from a second store on the same schema (as from another process or
server), so only ``kw_log`` can tell the first one what changed.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omoide.store.ports.memories import NewMemory
from omoide.store.postgres import PostgresStore, fts
from omoide.store.postgres import postings as pgpostings
from omoide.store.postgres.filters import memory_filter
from omoide.store.sql import postings as shared
from omoide.types import Scope, SearchFilters
from tests.store.contract import ALICE, BOB, add

WORDS = ["tea", "coffee", "jasmine", "garden", "zebra", "crossing", "paris", "run", "movies"]
_TENANTS = itertools.count()


@pytest.fixture
def pair(pg_url: str) -> Iterator[tuple[PostgresStore, PostgresStore]]:
    """A reader store and a writer store on one schema."""
    reader = PostgresStore(pg_url)
    writer = PostgresStore(pg_url)
    yield reader, writer
    writer.close()
    reader.close()


def warm(
    store: PostgresStore, scope: Scope, words: list[str], filters: SearchFilters | None = None
) -> list[tuple[str, float]]:
    return store.memories.keyword_search(scope, words, filters or SearchFilters(), 50)


def statement(
    store: PostgresStore, scope: Scope, words: list[str], filters: SearchFilters | None = None
) -> list[tuple[str, float]]:
    """The ranking of the SQL statement alone, in a snapshot of its own."""
    where = memory_filter(scope, filters or SearchFilters())
    with store.memories._db.read_one() as conn:
        return fts.search(conn, scope.user_id, scope.scope_id, words, where, 50)[0]


texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)
operation = st.one_of(
    st.tuples(st.just("add"), st.sampled_from([0, 1]), texts, st.sampled_from(["", "tea run"])),
    st.tuples(st.just("edit"), st.integers(0, 50), texts),
    st.tuples(st.just("context"), st.integers(0, 50), texts),
    st.tuples(st.just("delete"), st.integers(0, 50)),
)


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    ops=st.lists(operation, min_size=1, max_size=15),
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=4, unique=True),
)
def test_a_warm_cache_ranks_as_the_statement_after_any_writes(
    pair: tuple[PostgresStore, PostgresStore], ops: list[tuple[object, ...]], query: list[str]
) -> None:
    reader, writer = pair
    n = next(_TENANTS)
    scopes = [Scope(user_id=f"a{n}", scope_id="default"), Scope(user_id=f"b{n}", scope_id="x")]
    odd = SearchFilters(metadata={"k": 1})
    live: list[tuple[Scope, str]] = []
    for i, op in enumerate(ops):
        if op[0] == "add":
            scope = scopes[int(str(op[1]))]
            memory = add(writer, scope, str(op[2]), context=str(op[3]), metadata={"k": i % 2})
            live.append((scope, memory))
        elif live:
            scope, memory = live[int(str(op[1])) % len(live)]
            with writer.transaction() as tx:
                if op[0] == "edit":
                    tx.memories.update_memory(scope, memory, str(op[2]), None, "t")
                elif op[0] == "context":
                    tx.memories.set_context(scope, memory, str(op[2]))
                else:
                    tx.memories.delete_memory(scope, memory, "t")
                    live.remove((scope, memory))
        for scope in scopes:
            assert warm(reader, scope, query) == statement(reader, scope, query)
            assert warm(reader, scope, query, odd) == statement(reader, scope, query, odd)


def test_the_lists_are_used_and_patched_not_reloaded(
    pair: tuple[PostgresStore, PostgresStore],
) -> None:
    reader, writer = pair
    add(writer, ALICE, "tea garden")
    assert len(warm(reader, ALICE, ["tea"])) == 1
    lists = reader.memories._postings._lists
    assert (("alice", "demo"), "tea") in lists
    add(writer, ALICE, "more tea")
    assert len(warm(reader, ALICE, ["tea"])) == 2
    assert (("alice", "demo"), "tea") in lists  # patched from the log, still held
    assert warm(reader, ALICE, ["tea"]) == statement(reader, ALICE, ["tea"])


def test_a_memory_another_server_deletes_is_never_ranked_again(
    pair: tuple[PostgresStore, PostgresStore],
) -> None:
    reader, writer = pair
    gone = add(writer, ALICE, "jasmine tea in the garden")
    kept = add(writer, ALICE, "green tea")
    assert [i for i, _ in warm(reader, ALICE, ["tea"])] == [kept, gone]  # the lists are cached
    with writer.transaction() as tx:
        tx.memories.delete_memory(ALICE, gone, "t")
    assert [i for i, _ in warm(reader, ALICE, ["tea", "jasmine"])] == [kept]
    assert warm(reader, ALICE, ["tea", "jasmine"]) == statement(reader, ALICE, ["tea", "jasmine"])


def test_an_edit_moves_a_memory_between_cached_lists(
    pair: tuple[PostgresStore, PostgresStore],
) -> None:
    reader, writer = pair
    memory = add(writer, ALICE, "zebra crossing")
    add(writer, ALICE, "paris in the spring")
    assert [i for i, _ in warm(reader, ALICE, ["zebra"])] == [memory]
    assert [i for i, _ in warm(reader, ALICE, ["paris"])] != [memory]
    with writer.transaction() as tx:
        tx.memories.update_memory(ALICE, memory, "paris paris paris", None, "t")
    assert warm(reader, ALICE, ["zebra"]) == []
    assert warm(reader, ALICE, ["paris"])[0][0] == memory
    assert warm(reader, ALICE, ["paris", "zebra"]) == statement(reader, ALICE, ["paris", "zebra"])


@pytest.mark.timeout(120)
def test_a_write_that_commits_after_a_later_one_is_seen(pg_url: str) -> None:
    """Log ids follow inserts, not commits: the slow writer's row has the lower id, and the
    cache has already read past the fast writer's higher one when the slow one commits."""
    reader, slow, fast = PostgresStore(pg_url), PostgresStore(pg_url), PostgresStore(pg_url)
    try:
        add(fast, ALICE, "tea first")
        add(fast, BOB, "tea for bob")
        assert len(warm(reader, ALICE, ["tea"])) == 1  # alice's list is cached
        with slow.transaction() as tx:
            late = tx.memories.insert_memory(ALICE, NewMemory(text="tea late"), "t").id
            add(fast, BOB, "more tea for bob")  # commits first, with the higher log id
            assert len(warm(reader, BOB, ["tea"])) == 2  # the cache reads past it
            assert late not in [i for i, _ in warm(reader, ALICE, ["tea"])]
        assert late in [i for i, _ in warm(reader, ALICE, ["tea"])]
        assert warm(reader, ALICE, ["tea"]) == statement(reader, ALICE, ["tea"])
    finally:
        for store in (fast, slow, reader):
            store.close()


def test_a_log_trimmed_past_the_cache_reloads_it(
    pair: tuple[PostgresStore, PostgresStore],
) -> None:
    reader, writer = pair
    first = add(writer, ALICE, "coffee")
    assert [i for i, _ in warm(reader, ALICE, ["coffee"])] == [first]
    with writer.transaction() as tx:  # its postings go, and come back with another weight
        tx.memories.update_memory(ALICE, first, "coffee coffee coffee", None, "t")
    add(writer, ALICE, "coffee again")
    with writer.memories._db.write() as conn:  # what the writers' trim does, past the cache
        conn.execute("DELETE FROM kw_log WHERE id < (SELECT max(id) FROM kw_log)")
    assert warm(reader, ALICE, ["coffee"]) == statement(reader, ALICE, ["coffee"])
    assert warm(reader, ALICE, ["coffee"])[0][0] == first


def test_long_lists_are_ranked_by_the_statement(
    pair: tuple[PostgresStore, PostgresStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    reader, writer = pair
    for text in ("tea", "tea tea", "coffee tea"):
        add(writer, ALICE, text)
    monkeypatch.setattr(shared, "LOAD_MAX", 1)
    assert warm(reader, ALICE, ["tea"]) == statement(reader, ALICE, ["tea"])
    assert (("alice", "demo"), "tea") not in reader.memories._postings._lists
    assert [i for i, _ in warm(reader, ALICE, ["coffee"])] == [
        i for i, _ in statement(reader, ALICE, ["coffee"])
    ]


def test_a_filter_most_rows_fail_reads_further_down_the_order(
    pair: tuple[PostgresStore, PostgresStore],
) -> None:
    """Equal scores go by seq: the one memory the filter keeps is last of many, past the
    candidates a first pass probes."""
    reader, writer = pair
    size = fts.RESCORE_DEPTH + 100
    with writer.transaction() as tx:
        made = tx.memories.insert_memories(
            ALICE,
            [NewMemory(text="tea", metadata={"k": int(i == size - 1)}) for i in range(size)],
            "t",
        )
    only = SearchFilters(metadata={"k": 1})
    assert [i for i, _ in warm(reader, ALICE, ["tea"], only)] == [made[-1].id]
    assert warm(reader, ALICE, ["tea"], only) == statement(reader, ALICE, ["tea"], only)


def test_more_changes_than_a_catch_up_reads_reload_the_lists(
    pair: tuple[PostgresStore, PostgresStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    reader, writer = pair
    first = add(writer, ALICE, "coffee")
    assert [i for i, _ in warm(reader, ALICE, ["coffee"])] == [first]
    monkeypatch.setattr(pgpostings, "CATCH_UP_MAX", 2)
    with writer.transaction() as tx:  # its postings go, and come back with another weight
        tx.memories.update_memory(ALICE, first, "coffee coffee coffee", None, "t")
    add(writer, ALICE, "coffee again")
    assert warm(reader, ALICE, ["coffee"]) == statement(reader, ALICE, ["coffee"])
    assert reader.memories._postings._lists.holds(("alice", "demo"))  # read again, kept
