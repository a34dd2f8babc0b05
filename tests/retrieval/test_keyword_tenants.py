"""Keyword ranking uses only the tenant's own statistics (issue 13, point 1)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omoide.store.ports.memories import NewMemory
from omoide.store.sqlite import SQLiteStore, keyword, rows
from omoide.types import Scope, SearchFilters

WORDS = [
    "tea",
    "coffee",
    "jasmine",
    "movies",
    "alice",
    "berlin",
    "zebra",
    "crossing",
    "garden",
    "run",
    "running",
    "paris",
]
ALICE = Scope(user_id="alice", scope_id="default")
pytestmark = pytest.mark.sqlite_only(
    "SQLite's own keyword index (store/sqlite/keyword.py); the same tenant-independence on"
    " PostgreSQL: tests/postgres/test_keyword.py"
)


def add(store: SQLiteStore, scope: Scope, text: str, context: str = "") -> str:
    with store.transaction() as tx:
        return tx.memories.insert_memory(scope, NewMemory(text=text, context=context), "t").id


def search(store: SQLiteStore, scope: Scope, words: list[str]) -> list[tuple[str, float]]:
    return store.memories.keyword_search(scope, words, SearchFilters(), 50)


texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join)
others = st.lists(
    st.tuples(st.sampled_from(["bob", "carol", "dave"]), texts), min_size=1, max_size=30
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    mine=st.lists(st.tuples(texts, texts), min_size=1, max_size=12),
    theirs=others,
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=4, unique=True),
)
def test_results_equal_before_and_after_other_tenants_write(
    tmp_path_factory: pytest.TempPathFactory,
    mine: list[tuple[str, str]],
    theirs: list[tuple[str, str]],
    query: list[str],
) -> None:
    store = SQLiteStore(tmp_path_factory.mktemp("prop") / "p.db")
    try:
        for user, text in theirs[: len(theirs) // 2]:  # some before, some after
            add(store, Scope(user_id=user, scope_id="default"), text)
        for text, context in mine:
            add(store, ALICE, text, context)
        before = search(store, ALICE, query)
        for user, text in theirs[len(theirs) // 2 :]:
            add(store, Scope(user_id=user, scope_id="default"), text)
        for user in {u for u, _ in theirs}:
            add(store, Scope(user_id=user, scope_id="default"), " ".join(query))
        assert search(store, ALICE, query) == before  # ids, order and exact scores
    finally:
        store.close()


def test_bm25_equals_fts5_when_the_tenant_is_alone(tmp_path: Path) -> None:
    """The scores keep FTS5 bm25's shape: alone in a file, they are FTS5's own numbers."""
    store = SQLiteStore(tmp_path / "one.db")
    docs = [
        ("Alice likes jasmine tea in the garden", "Bob: what do you drink?"),
        ("We watched two movies in Paris", ""),
        ("running in the garden every morning, running again at night", "tea later"),
        ("Coffee, coffee and more coffee", "jasmine"),
        ("nothing to see here", ""),
    ]
    for text, context in docs:
        add(store, ALICE, text, context)
    query = ["jasmine", "garden", "running", "coffee"]
    ours = search(store, ALICE, query)
    conn = sqlite3.connect(store.path)
    fts = conn.execute(
        "SELECT m.id, -bm25(memories_fts, 1.0, 0.4, 0.0) FROM memories_fts JOIN memories m"
        " ON m.seq = memories_fts.rowid WHERE memories_fts MATCH"
        ' \'"jasmine" OR "garden" OR "running" OR "coffee"\' ORDER BY 2 DESC'
    ).fetchall()
    conn.close()
    store.close()
    assert [i for i, _ in ours] == [i for i, _ in fts]
    assert [s for _, s in ours] == pytest.approx([s for _, s in fts], rel=1e-9)


def test_small_tenant_keeps_its_content_words(tmp_path: Path) -> None:
    """Six memories: `movies` is in a third of them and must still count."""
    store = SQLiteStore(tmp_path / "small.db")
    add(store, ALICE, "Alice lives in Berlin")
    movies = add(store, ALICE, "Alice likes movies with robots")
    add(store, ALICE, "Alice saw two movies last year and disliked both")
    for text in ("Alice has a cat", "Alice works at a bakery", "Alice plays chess"):
        add(store, ALICE, text)
    hits = search(store, ALICE, ["movies", "alice", "like"])
    assert hits[0][0] == movies
    store.close()


def test_another_tenants_words_change_nothing_and_reveal_nothing(tmp_path: Path) -> None:
    """1,500 of bob's memories saying "zebra" leave alice's "zebra crossing" as it was."""
    store = SQLiteStore(tmp_path / "leak.db")
    mine = add(store, ALICE, "the zebra crossing near the school")
    add(store, ALICE, "a crossing of the alps")
    before = search(store, ALICE, ["zebra", "crossing"])
    bob = Scope(user_id="bob", scope_id="default")
    with store.transaction() as tx:
        for i in range(1_500):
            tx.memories.insert_memory(bob, NewMemory(text=f"zebra number {i}"), "t")
    after = search(store, ALICE, ["zebra", "crossing"])
    assert after == before and after[0][0] == mine
    store.close()


def test_edits_and_deletes_keep_the_statistics_exact(tmp_path: Path) -> None:
    """After edits and deletes, scores equal those of a store built with the end state."""
    edited = SQLiteStore(tmp_path / "edited.db")
    a = add(edited, ALICE, "tea tea garden")
    b = add(edited, ALICE, "coffee in the garden")
    add(edited, ALICE, "jasmine tea")
    with edited.transaction() as tx:
        tx.memories.update_memory(ALICE, a, "jasmine in the garden", None, "t")
        tx.memories.set_context(ALICE, b, "tea please")
    gone = add(edited, ALICE, "garden garden garden")
    with edited.transaction() as tx:
        tx.memories.delete_memory(ALICE, gone, "t")
    fresh = SQLiteStore(tmp_path / "fresh.db")
    add(fresh, ALICE, "jasmine in the garden")
    add(fresh, ALICE, "coffee in the garden", context="tea please")
    add(fresh, ALICE, "jasmine tea")
    query = ["tea", "garden", "jasmine"]
    assert [s for _, s in search(edited, ALICE, query)] == pytest.approx(
        [s for _, s in search(fresh, ALICE, query)], rel=1e-12
    )
    edited.close()
    fresh.close()


def test_deleting_a_tenant_removes_its_keyword_index(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "gone.db")
    bob = Scope(user_id="bob", scope_id="default")
    for text in ("jasmine tea", "tea in the garden", "garden party"):
        add(store, ALICE, text)
    add(store, bob, "tea for bob")
    with store.transaction() as tx:
        tx.admin.delete_scope(ALICE)
    conn = sqlite3.connect(store.path)
    left = {
        table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        for table in ("kw_postings", "kw_docs")
    }
    frequencies = conn.execute("SELECT sum(df) FROM kw_terms").fetchone()[0]
    terms = {row[0] for row in conn.execute("SELECT term FROM kw_terms")}
    docs = conn.execute("SELECT sum(docs) FROM kw_tenants").fetchone()[0]
    conn.close()
    assert left == {"kw_postings": 3, "kw_docs": 1} and frequencies == 3 and docs == 1  # bob
    assert terms == {"tea", "for", "bob"}  # alice's words are not left behind at df 0
    assert search(store, ALICE, ["tea"]) == [] and len(search(store, bob, ["tea"])) == 1
    store.close()


def test_tokeniser_line_cache_overflow_keeps_every_batch_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A batch larger than the line cache, and one after it, are tokenised in full."""
    monkeypatch.setattr(keyword, "LINE_CACHE", 3)
    tokenizer = keyword.Tokenizer()
    first = tokenizer.documents([("tea\ngarden", "jasmine\n"), ("coffee", "")])
    again = tokenizer.documents([("tea", "coffee\nmovies\nrobots\nberlin"), ("tea\ngarden", "")])
    assert first[0].tf == {"tea": 1.0, "garden": 1.0, "jasmin": 0.4} and first[0].length == 4
    assert again[0].tf == {"tea": 1.0, "coffe": 0.4, "movi": 0.4, "robot": 0.4, "berlin": 0.4}
    assert again[1].tf == {"tea": 1.0, "garden": 1.0}


def test_memories_from_before_the_keyword_index_are_indexed_on_open(tmp_path: Path) -> None:
    from omoide.store.sqlite import migrate
    from omoide.store.sqlite.db import connect

    path = tmp_path / "old.db"
    conn = connect(path)
    migrate.migrate(conn, upto=5)
    conn.execute(
        "INSERT INTO memories (id, user_id, scope_id, type, text, tenant_token, valid_from,"
        " created_at, updated_at) VALUES ('m1', 'alice', 'default', 'raw', 'kept jasmine tea',"
        " ?, 1, 1, 1)",
        (rows.tenant_token(ALICE),),
    )
    conn.close()
    store = SQLiteStore(path)
    assert [i for i, _ in search(store, ALICE, ["jasmine"])] == ["m1"]
    assert store.admin.get_meta("keyword_index_pending") is None
    store.close()


def test_a_deleted_memorys_words_leave_the_frequencies(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "words.db")
    secret = add(store, ALICE, "my pin is zanzibar")
    add(store, ALICE, "my cat is grey")
    with store.transaction() as tx:
        tx.memories.delete_memory(ALICE, secret, "t")
    conn = sqlite3.connect(store.path)
    terms = {row[0]: row[1] for row in conn.execute("SELECT term, df FROM kw_terms")}
    conn.close()
    assert "zanzibar" not in terms and "pin" not in terms
    assert terms["cat"] == 1 and terms["my"] == 1
    store.close()
