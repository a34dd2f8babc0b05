"""The in-process posting lists (``store/sql/postings.py``) never rank from a stale list.

Both backends keep a term's postings in process and follow a change log in the database
(``kw_log``) to keep them in step. Every check compares the ranking of a store whose cache has
been warm through the writes with a ranking that holds no cache at that moment (``Probe``:
SQLite's ranking from an empty cache over whole lists, PostgreSQL's one SQL statement): ids,
order and scores, exactly. Writes come from a second handle on the same database (as from
another process or server), so only the log can tell the first one what changed.

A scenario about one backend's own way of following its log runs on that backend only
(``only_on``, with the reason).
"""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omoide.store import pruning
from omoide.store.ports.memories import MemoryReads, NewMemory
from omoide.store.protocol import Store
from omoide.store.sql import postings as shared
from omoide.store.sql.postings import PostingLists
from omoide.types import Scope, SearchFilters
from tests.store.contract import ALICE, BOB, Backend, add, covers

WORDS = ["tea", "coffee", "jasmine", "garden", "zebra", "crossing", "paris", "run", "movies"]
LIMIT = 50
Ranking = Sequence[tuple[object, float]]
Pair = tuple[Store, Store]  # a reader handle and a writer handle on one database
_TENANTS = itertools.count()


def only_on(name: str, reason: str) -> pytest.MarkDecorator:
    """Run a scenario on the backend ``name`` only. ``reason``, why it has no twin, is kept
    with the scenario in the code (the test id stays short: ``<backend>-only``)."""
    del reason
    return pytest.mark.parametrize("backend", [name], indirect=True, ids=[f"{name}-only"])


class SQLiteProbe:
    """SQLite's cache: ``PostingsCache`` (``store/sqlite/postings.py``) behind ``keyword.rank``."""

    def ranked(self, store: Any, scope: Scope, words: list[str], filters: Any = None) -> Ranking:
        """The store's own ranking through its cache: (seq, score) before the filters, so a
        stale seq shows even where the filters would hide it."""
        from omoide.store.sqlite import keyword, rows
        from omoide.store.sqlite.db import snapshot

        if filters is not None:
            return warm(store, scope, words, filters)
        reads = store.memories
        conn = store._reader()
        with snapshot(conn):
            return keyword.rank(
                conn, reads._tokenizer, reads._postings, rows.tenant_token(scope), words, LIMIT
            )

    def reference(self, store: Any, scope: Scope, words: list[str], filters: Any = None) -> Ranking:
        """The ranking an empty cache gives from whole lists (numpy over every list, whatever
        the test set), in one snapshot of the file; through the filters when given."""
        from omoide.store.sqlite import keyword, rows
        from omoide.store.sqlite.db import snapshot
        from omoide.store.sqlite.memory_reads import _filter_seqs
        from omoide.store.sqlite.postings import PostingsCache

        conn = store._reader()
        limit = shared.LOAD_MAX
        shared.LOAD_MAX = 1 << 62
        try:
            with snapshot(conn):
                token = rows.tenant_token(scope)
                depth = LIMIT if filters is None else 1 << 30  # every match, for the filters
                ranked = keyword.rank(
                    conn, keyword.Tokenizer(), PostingsCache(), token, words, depth
                )
                if filters is None:
                    return ranked
                return _filter_seqs(conn, scope, filters, ranked)[:LIMIT]
        finally:
            shared.LOAD_MAX = limit

    def lists(self, store: Any) -> PostingLists:
        return store.memories._postings._lists  # type: ignore[no-any-return]

    def tenant(self, scope: Scope) -> object:
        from omoide.store.sqlite import rows

        return rows.tenant_token(scope)

    def bound(self, store: Any, max_postings: int) -> PostingLists:
        """Give the store's searches a cache holding at most ``max_postings``; its lists."""
        from omoide.store.sqlite.postings import PostingsCache

        store.memories._postings = PostingsCache(max_postings=max_postings)
        return self.lists(store)

    def trim_log(self, store: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        """The writers' trim, keeping only the newest log entry."""
        from omoide.store.sqlite import postings

        monkeypatch.setattr(postings, "_LOG_KEEP", 1)
        postings.trim_log(store._writer)

    def small_pruning(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Pruning and rescoring on a handful of memories, so both paths of ``rank`` run."""
        monkeypatch.setattr(pruning, "MIN_DOCS", 1)
        monkeypatch.setattr(pruning, "POSTINGS_MAX", 3)
        monkeypatch.setattr(pruning, "RESCORE_DEPTH", 4)


class PostgresProbe:
    """PostgreSQL's cache: ``PostingsCache`` (``store/postgres/postings.py``) behind
    ``fts.rank``, whose reference is ``fts.search``, the same ranking in one statement."""

    def ranked(self, store: Any, scope: Scope, words: list[str], filters: Any = None) -> Ranking:
        return warm(store, scope, words, filters)

    def reference(self, store: Any, scope: Scope, words: list[str], filters: Any = None) -> Ranking:
        """The ranking of the SQL statement alone, in a snapshot of its own."""
        from omoide.store.postgres import fts
        from omoide.store.postgres.filters import memory_filter

        where = memory_filter(scope, filters or SearchFilters())
        with store.memories._db.read_one() as conn:
            return fts.search(conn, scope.user_id, scope.scope_id, words, where, LIMIT)[0]

    def lists(self, store: Any) -> PostingLists:
        return store.memories._postings._lists  # type: ignore[no-any-return]

    def tenant(self, scope: Scope) -> object:
        return (scope.user_id, scope.scope_id)

    def bound(self, store: Any, max_postings: int) -> PostingLists:
        from omoide.store.postgres.postings import PostingsCache

        store.memories._postings = PostingsCache(max_postings=max_postings)
        return self.lists(store)

    def trim_log(self, store: Any, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ARG002
        """What the writers' trim does, keeping only the newest log row."""
        with store.memories._db.write() as conn:
            conn.execute("DELETE FROM kw_log WHERE id < (SELECT max(id) FROM kw_log)")

    def small_pruning(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Nothing: the statement's pruning constants are written into its SQL at import, so
        patched ones would rank the cache's way and the statement's apart."""


Probe = SQLiteProbe | PostgresProbe
PROBES: dict[str, Probe] = {
    "sqlite": SQLiteProbe(),
    "postgres": PostgresProbe(),
}


@pytest.fixture
def pair(backend: Backend) -> Pair:
    """A reader and a writer handle on the test's database."""
    return backend.open(), backend.open()


@pytest.fixture
def probe(backend: Backend) -> Probe:
    return PROBES[backend.name]


def warm(
    store: Store, scope: Scope, words: list[str], filters: SearchFilters | None = None
) -> list[tuple[str, float]]:
    return store.memories.keyword_search(scope, words, filters or SearchFilters(), LIMIT)


def ids(store: Store, scope: Scope, words: list[str]) -> list[str]:
    return [i for i, _ in warm(store, scope, words)]


texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)
operation = st.one_of(
    st.tuples(st.just("add"), st.sampled_from([0, 1]), texts, texts),
    st.tuples(st.just("edit"), st.integers(0, 50), texts),
    st.tuples(st.just("context"), st.integers(0, 50), texts),
    st.tuples(st.just("delete"), st.integers(0, 50)),
    st.tuples(st.just("add"), st.sampled_from([0, 1]), texts, st.just("")),  # no context
)


@pytest.mark.parametrize("load_max", [0, shared.LOAD_MAX])
@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    ops=st.lists(operation, min_size=1, max_size=25),
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=4, unique=True),
)
def test_a_warm_cache_ranks_as_no_cache_after_any_writes(
    probe: Probe,
    pair: Pair,
    monkeypatch: pytest.MonkeyPatch,
    load_max: int,
    ops: list[tuple[object, ...]],
    query: list[str],
) -> None:
    # load_max 0: ranked in SQL and rescored from the rows read, never from a whole list
    probe.small_pruning(monkeypatch)
    monkeypatch.setattr(shared, "LOAD_MAX", load_max)
    reader, writer = pair  # one pair for every example: new tenants each
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
            assert probe.ranked(reader, scope, query) == probe.reference(reader, scope, query)
            assert probe.ranked(reader, scope, query, odd) == probe.reference(
                reader, scope, query, odd
            )


@covers(MemoryReads.keyword_search)
def test_the_lists_are_used_and_patched_not_reloaded(probe: Probe, pair: Pair) -> None:
    reader, writer = pair
    add(writer, ALICE, "tea garden")
    assert len(warm(reader, ALICE, ["tea"])) == 1
    lists = probe.lists(reader)
    assert (probe.tenant(ALICE), "tea") in lists
    add(writer, ALICE, "more tea")
    assert len(warm(reader, ALICE, ["tea"])) == 2
    assert (probe.tenant(ALICE), "tea") in lists  # patched from the log, still held
    assert probe.ranked(reader, ALICE, ["tea"]) == probe.reference(reader, ALICE, ["tea"])


@covers(MemoryReads.keyword_search)
def test_a_memory_another_handle_deletes_is_never_ranked_again(probe: Probe, pair: Pair) -> None:
    reader, writer = pair
    gone = add(writer, ALICE, "jasmine tea in the garden")
    kept = add(writer, ALICE, "green tea")
    assert ids(reader, ALICE, ["tea"]) == [kept, gone]  # the lists are cached
    with writer.transaction() as tx:
        tx.memories.delete_memory(ALICE, gone, "t")
    assert ids(reader, ALICE, ["tea", "jasmine"]) == [kept]
    both = probe.ranked(reader, ALICE, ["tea", "jasmine"])
    assert both == probe.reference(reader, ALICE, ["tea", "jasmine"])
    assert both == probe.reference(reader, ALICE, ["tea"])  # nothing of jasmine is left


@covers(MemoryReads.keyword_search)
def test_an_edit_moves_a_memory_between_cached_lists(probe: Probe, pair: Pair) -> None:
    reader, writer = pair
    memory = add(writer, ALICE, "zebra crossing")
    add(writer, ALICE, "paris in the spring")
    assert ids(reader, ALICE, ["zebra"]) == [memory]
    assert ids(reader, ALICE, ["paris"]) != [memory]
    with writer.transaction() as tx:
        tx.memories.update_memory(ALICE, memory, "paris paris paris", None, "t")
    assert warm(reader, ALICE, ["zebra"]) == []
    assert ids(reader, ALICE, ["paris"])[0] == memory
    words = ["paris", "zebra"]
    assert probe.ranked(reader, ALICE, words) == probe.reference(reader, ALICE, words)


def test_a_log_trimmed_past_a_delete_reloads_the_lists(
    probe: Probe, pair: Pair, monkeypatch: pytest.MonkeyPatch
) -> None:
    reader, writer = pair
    first = add(writer, ALICE, "coffee")
    assert ids(reader, ALICE, ["coffee"]) == [first]
    with writer.transaction() as tx:
        tx.memories.delete_memory(ALICE, first, "t")
    second = add(writer, ALICE, "coffee again")
    third = add(writer, ALICE, "more coffee")
    probe.trim_log(writer, monkeypatch)  # the delete's entry, and what it named, are gone
    assert sorted(ids(reader, ALICE, ["coffee"])) == sorted([second, third])
    # on SQLite the second memory took the first one's seq: only a reload gives it its length
    assert probe.ranked(reader, ALICE, ["coffee"]) == probe.reference(reader, ALICE, ["coffee"])


def test_a_log_trimmed_past_an_edit_reloads_the_lists(
    probe: Probe, pair: Pair, monkeypatch: pytest.MonkeyPatch
) -> None:
    reader, writer = pair
    first = add(writer, ALICE, "coffee")
    assert ids(reader, ALICE, ["coffee"]) == [first]
    with writer.transaction() as tx:  # its postings go, and come back with another weight
        tx.memories.update_memory(ALICE, first, "coffee coffee coffee", None, "t")
    add(writer, ALICE, "coffee again")
    probe.trim_log(writer, monkeypatch)
    assert probe.ranked(reader, ALICE, ["coffee"]) == probe.reference(reader, ALICE, ["coffee"])
    assert ids(reader, ALICE, ["coffee"])[0] == first


def test_lists_beyond_the_bound_are_evicted_and_read_again(
    probe: Probe, pair: Pair, monkeypatch: pytest.MonkeyPatch
) -> None:
    probe.small_pruning(monkeypatch)
    reader, writer = pair
    for i in range(12):
        add(writer, ALICE, " ".join(WORDS[i % len(WORDS) : i % len(WORDS) + 3]))
    bounded = probe.bound(reader, 4)
    for query in (["tea", "coffee"], ["garden", "zebra", "paris"], WORDS, ["tea"]):
        assert probe.ranked(reader, ALICE, query) == probe.reference(reader, ALICE, query)
        assert bounded._size <= 4


def test_a_tenant_with_many_changes_reads_its_lists_again(
    probe: Probe, pair: Pair, monkeypatch: pytest.MonkeyPatch
) -> None:
    reader, writer = pair
    add(writer, ALICE, "tea garden")
    add(writer, BOB, "tea")
    warm(reader, ALICE, ["tea"])
    warm(reader, BOB, ["tea"])
    monkeypatch.setattr(shared, "PATCH_MAX", 1)
    with writer.transaction() as tx:  # a batch of two: alice's lists go, bob's are patched
        for text in ("more tea", "tea and coffee"):
            tx.memories.insert_memory(ALICE, NewMemory(text=text), "t")
    add(writer, BOB, "tea for two")
    assert probe.ranked(reader, ALICE, ["tea"]) == probe.reference(reader, ALICE, ["tea"])
    assert len(warm(reader, ALICE, ["tea"])) == 3
    assert (probe.tenant(BOB), "tea") in probe.lists(reader)  # patched, not dropped
    assert probe.ranked(reader, BOB, ["tea"]) == probe.reference(reader, BOB, ["tea"])


def test_long_lists_are_ranked_in_sql_and_not_kept(
    probe: Probe, pair: Pair, monkeypatch: pytest.MonkeyPatch
) -> None:
    reader, writer = pair
    for text in ("tea", "tea tea", "coffee tea"):
        add(writer, ALICE, text)
    monkeypatch.setattr(shared, "LOAD_MAX", 1)
    assert probe.ranked(reader, ALICE, ["tea"]) == probe.reference(reader, ALICE, ["tea"])
    assert (probe.tenant(ALICE), "tea") not in probe.lists(reader)
    assert [i for i, _ in probe.ranked(reader, ALICE, ["coffee"])] == [
        i for i, _ in probe.reference(reader, ALICE, ["coffee"])
    ]


@covers(MemoryReads.keyword_search)
def test_a_filter_most_rows_fail_reads_further_down_the_order(probe: Probe, pair: Pair) -> None:
    """Equal scores go by seq: the one memory the filter keeps is last of many, past the
    candidates a first pass probes."""
    reader, writer = pair
    size = pruning.RESCORE_DEPTH + 100
    with writer.transaction() as tx:
        made = tx.memories.insert_memories(
            ALICE,
            [NewMemory(text="tea", metadata={"k": int(i == size - 1)}) for i in range(size)],
            "t",
        )
    only = SearchFilters(metadata={"k": 1})
    assert [i for i, _ in warm(reader, ALICE, ["tea"], only)] == [made[-1].id]
    assert warm(reader, ALICE, ["tea"], only) == probe.reference(reader, ALICE, ["tea"], only)


@only_on("sqlite", "SQLite's snapshots are opened by the caller: PostgreSQL's catch-up takes one")
def test_a_search_in_an_older_snapshot_reads_that_snapshot(probe: Probe, pair: Pair) -> None:
    from omoide.store.sqlite import keyword, rows

    reader, writer = pair
    add(writer, ALICE, "tea")
    path = reader.location
    conn = sqlite3.connect(path, isolation_level=None)  # another thread's reader
    conn.execute("BEGIN")
    conn.execute("SELECT count(*) FROM kw_log").fetchone()  # the snapshot starts here
    add(writer, ALICE, "tea and more tea")
    newest = probe.ranked(reader, ALICE, ["tea"])  # the cache moves past the open snapshot
    assert len(newest) == 2
    reads: Any = reader.memories
    token = rows.tenant_token(ALICE)
    then = keyword.rank(conn, reads._tokenizer, reads._postings, token, ["tea"], LIMIT)
    conn.execute("COMMIT")
    conn.close()
    assert len(then) == 1  # not the cache's newer list
    assert probe.ranked(reader, ALICE, ["tea"]) == newest


@only_on("postgres", "SQLite has one writer at a time: a later write never commits first")
@pytest.mark.timeout(120)
def test_a_write_that_commits_after_a_later_one_is_seen(probe: Probe, backend: Backend) -> None:
    """Log ids follow inserts, not commits: the slow writer's row has the lower id, and the
    cache has already read past the fast writer's higher one when the slow one commits."""
    reader, slow, fast = backend.open(), backend.open(), backend.open()
    add(fast, ALICE, "tea first")
    add(fast, BOB, "tea for bob")
    assert len(warm(reader, ALICE, ["tea"])) == 1  # alice's list is cached
    with slow.transaction() as tx:
        late = tx.memories.insert_memory(ALICE, NewMemory(text="tea late"), "t").id
        add(fast, BOB, "more tea for bob")  # commits first, with the higher log id
        assert len(warm(reader, BOB, ["tea"])) == 2  # the cache reads past it
        assert late not in ids(reader, ALICE, ["tea"])
    assert late in ids(reader, ALICE, ["tea"])
    assert warm(reader, ALICE, ["tea"]) == probe.reference(reader, ALICE, ["tea"])


@only_on("postgres", "SQLite applies its whole log: its bound is per tenant (PATCH_MAX)")
def test_more_changes_than_a_catch_up_reads_reload_the_lists(
    probe: Probe, pair: Pair, monkeypatch: pytest.MonkeyPatch
) -> None:
    from omoide.store.postgres import postings as pgpostings

    reader, writer = pair
    first = add(writer, ALICE, "coffee")
    assert ids(reader, ALICE, ["coffee"]) == [first]
    monkeypatch.setattr(pgpostings, "CATCH_UP_MAX", 2)
    with writer.transaction() as tx:  # its postings go, and come back with another weight
        tx.memories.update_memory(ALICE, first, "coffee coffee coffee", None, "t")
    add(writer, ALICE, "coffee again")
    assert warm(reader, ALICE, ["coffee"]) == probe.reference(reader, ALICE, ["coffee"])
    assert probe.lists(reader).holds(probe.tenant(ALICE))  # read again, kept
