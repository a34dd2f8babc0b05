"""The posting-list cache (store/sqlite/postings.py) never ranks from a stale list.

Every check compares a store whose cache has been warm through the writes with what an empty
cache reads from the file at that moment: ids, order and scores, exactly. Writes come from a
second store on the same file (as from another process), so only ``kw_log`` can tell the
first one what changed.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omoide.store import pruning
from omoide.store.ports.memories import NewMemory
from omoide.store.sql import postings as shared
from omoide.store.sqlite import SQLiteStore, keyword, postings, rows
from omoide.store.sqlite.db import snapshot
from omoide.store.sqlite.postings import PostingsCache
from omoide.types import Scope, SearchFilters

WORDS = ["tea", "coffee", "jasmine", "garden", "zebra", "crossing", "paris", "run", "movies"]
ALICE = Scope(user_id="alice", scope_id="default")
BOB = Scope(user_id="bob", scope_id="default")
pytestmark = pytest.mark.sqlite_only("SQLite's in-process posting-list cache")


@pytest.fixture
def small_pruning(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pruning and rescoring on a handful of memories, so both paths of ``rank`` run."""
    monkeypatch.setattr(pruning, "MIN_DOCS", 1)
    monkeypatch.setattr(pruning, "POSTINGS_MAX", 3)
    monkeypatch.setattr(pruning, "RESCORE_DEPTH", 4)


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[tuple[SQLiteStore, SQLiteStore]]:
    """A reader store and a writer store on one file."""
    reader = SQLiteStore(tmp_path / "shared.db")
    writer = SQLiteStore(tmp_path / "shared.db")
    yield reader, writer
    writer.close()
    reader.close()


def warm(store: SQLiteStore, scope: Scope, words: list[str]) -> list[tuple[str, float]]:
    return store.memories.keyword_search(scope, words, SearchFilters(), 50)


def cold(store: SQLiteStore, scope: Scope, words: list[str]) -> list[tuple[int, float]]:
    """The ranking an empty cache gives from whole lists, in one snapshot of the file."""
    conn = store._reader()
    limit = shared.LOAD_MAX
    shared.LOAD_MAX = 1 << 62  # numpy over every list, whatever the test set
    try:
        with snapshot(conn):
            return keyword.rank(
                conn, keyword.Tokenizer(), PostingsCache(), rows.tenant_token(scope), words, 50
            )
    finally:
        shared.LOAD_MAX = limit


def warm_seqs(store: SQLiteStore, scope: Scope, words: list[str]) -> list[tuple[int, float]]:
    """The store's own ranking (its cache), as (seq, score)."""
    conn = store._reader()
    with snapshot(conn):
        return keyword.rank(
            conn,
            store._tokenizer,
            store._postings,
            rows.tenant_token(scope),
            words,
            50,
        )


def add(store: SQLiteStore, scope: Scope, text: str, context: str = "") -> str:
    with store.transaction() as tx:
        return tx.memories.insert_memory(scope, NewMemory(text=text, context=context), "t").id


texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)
operation = st.one_of(
    st.tuples(st.just("add"), st.sampled_from([ALICE, BOB]), texts, texts),
    st.tuples(st.just("edit"), st.integers(0, 50), texts),
    st.tuples(st.just("context"), st.integers(0, 50), texts),
    st.tuples(st.just("delete"), st.integers(0, 50)),
)


@pytest.mark.parametrize("load_max", [0, shared.LOAD_MAX])
@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    ops=st.lists(operation, min_size=1, max_size=25),
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=4, unique=True),
)
def test_a_warm_cache_ranks_as_an_empty_one_after_any_writes(
    tmp_path_factory: pytest.TempPathFactory,
    small_pruning: None,
    monkeypatch: pytest.MonkeyPatch,
    load_max: int,
    ops: list[tuple[object, ...]],
    query: list[str],
) -> None:
    # 0: ranked in SQL and rescored from the rows read, never a whole list; the reference
    # (``cold``) ranks from whole lists in numpy, and both must agree to the last bit
    monkeypatch.setattr(shared, "LOAD_MAX", load_max)
    path = tmp_path_factory.mktemp("cache") / "c.db"
    reader, writer = SQLiteStore(path), SQLiteStore(path)
    live: list[tuple[Scope, str]] = []
    try:
        for op in ops:
            if op[0] == "add":
                scope, text, context = op[1], op[2], op[3]
                assert isinstance(scope, Scope) and isinstance(text, str)
                live.append((scope, add(writer, scope, text, str(context))))
            elif live:
                scope, memory_id = live[int(str(op[1])) % len(live)]
                with writer.transaction() as tx:
                    if op[0] == "edit":
                        tx.memories.update_memory(scope, memory_id, str(op[2]), None, "t")
                    elif op[0] == "context":
                        tx.memories.set_context(scope, memory_id, str(op[2]))
                    else:
                        tx.memories.delete_memory(scope, memory_id, "t")
                        live.remove((scope, memory_id))
            for scope in (ALICE, BOB):
                assert warm_seqs(reader, scope, query) == cold(reader, scope, query)
    finally:
        writer.close()
        reader.close()


def test_a_memory_another_process_deletes_is_never_ranked_again(
    pair: tuple[SQLiteStore, SQLiteStore],
) -> None:
    reader, writer = pair
    gone = add(writer, ALICE, "jasmine tea in the garden")
    kept = add(writer, ALICE, "green tea")
    assert [i for i, _ in warm(reader, ALICE, ["tea"])] == [kept, gone]  # the lists are cached
    with writer.transaction() as tx:
        tx.memories.delete_memory(ALICE, gone, "t")
    assert [i for i, _ in warm(reader, ALICE, ["tea", "jasmine"])] == [kept]
    assert warm_seqs(reader, ALICE, ["tea", "jasmine"]) == cold(reader, ALICE, ["tea"])


def test_an_edit_moves_a_memory_between_cached_lists(
    pair: tuple[SQLiteStore, SQLiteStore],
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
    assert warm_seqs(reader, ALICE, ["paris", "zebra"]) == cold(reader, ALICE, ["paris", "zebra"])


def test_a_log_trimmed_past_the_cache_reloads_it(
    pair: tuple[SQLiteStore, SQLiteStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    reader, writer = pair
    first = add(writer, ALICE, "coffee")
    assert [i for i, _ in warm(reader, ALICE, ["coffee"])] == [first]
    monkeypatch.setattr(postings, "_LOG_KEEP", 1)
    with writer.transaction() as tx:
        tx.memories.delete_memory(ALICE, first, "t")
    second = add(writer, ALICE, "coffee again")
    third = add(writer, ALICE, "more coffee")
    postings.trim_log(writer._writer)  # the delete's entry, and what it named, are gone
    assert sorted(i for i, _ in warm(reader, ALICE, ["coffee"])) == sorted([second, third])
    # the second memory took the first one's seq: only a reload gives it its own length
    assert warm_seqs(reader, ALICE, ["coffee"]) == cold(reader, ALICE, ["coffee"])


def test_a_search_in_an_older_snapshot_reads_that_snapshot(
    pair: tuple[SQLiteStore, SQLiteStore],
) -> None:
    reader, writer = pair
    add(writer, ALICE, "tea")
    conn = sqlite3.connect(reader.path, isolation_level=None)  # another thread's reader
    conn.execute("BEGIN")
    conn.execute("SELECT count(*) FROM kw_log").fetchone()  # the snapshot starts here
    add(writer, ALICE, "tea and more tea")
    newest = warm_seqs(reader, ALICE, ["tea"])  # the cache moves past the open snapshot
    assert len(newest) == 2
    token = rows.tenant_token(ALICE)
    then = keyword.rank(conn, reader._tokenizer, reader._postings, token, ["tea"], 50)
    conn.execute("COMMIT")
    conn.close()
    assert len(then) == 1  # not the cache's newer list
    assert warm_seqs(reader, ALICE, ["tea"]) == newest


def test_lists_beyond_the_bound_are_evicted_and_read_again(
    pair: tuple[SQLiteStore, SQLiteStore], small_pruning: None
) -> None:
    reader, writer = pair
    for i in range(12):
        add(writer, ALICE, " ".join(WORDS[i % len(WORDS) : i % len(WORDS) + 3]))
    bounded = PostingsCache(max_postings=4)
    conn = reader._reader()
    token = rows.tenant_token(ALICE)
    for query in (["tea", "coffee"], ["garden", "zebra", "paris"], WORDS, ["tea"]):
        with snapshot(conn):
            got = keyword.rank(conn, reader._tokenizer, bounded, token, query, 50)
        assert got == cold(reader, ALICE, query)
        assert bounded._lists._size <= 4


def test_a_tenant_with_many_changes_reads_its_lists_again(
    pair: tuple[SQLiteStore, SQLiteStore], monkeypatch: pytest.MonkeyPatch
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
    assert warm_seqs(reader, ALICE, ["tea"]) == cold(reader, ALICE, ["tea"])
    assert len(warm(reader, ALICE, ["tea"])) == 3
    token = rows.tenant_token(BOB)
    assert (token, "tea") in reader._postings._lists  # patched, not dropped
    assert warm_seqs(reader, BOB, ["tea"]) == cold(reader, BOB, ["tea"])
