"""A search costs few round trips, and returns what it returned before.

The client's protocol messages are read from libpq's trace of every pooled connection: the
client waits for the server at each ``Sync`` (the end of a pipeline or of a statement of the
extended protocol), at each ``Flush`` that does not follow one (a result fetched inside a
pipeline), and at each ``Query`` (the simple protocol). A keyword search over cached posting
lists takes two: its ``BEGIN`` with the cache's catch-up and the query's statistics, then
the look-up of the ranked rows' ids with its ``COMMIT``; a search that misses lists reads all
of them in one more; a small tenant's vector search reads the tenant's counts with its hits,
so a hybrid search asks no count of its own.
"""

from __future__ import annotations

import itertools
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from psycopg.pq import Trace

import omoide.store.postgres.db as pgdb
from omoide.embed.hashing import HashEmbedder
from omoide.memory import Memory
from omoide.store.ports.memories import NewMemory
from omoide.store.postgres import PostgresStore, fts
from omoide.store.postgres.filters import memory_filter
from omoide.types import DEFAULT_ID, Scope, SearchFilters
from tests.store.contract import ALICE, add


class Tracer:
    """libpq's trace of every pooled connection opened since the fixture started, while a
    ``round_trips`` block runs (a trace is written out when it stops)."""

    def __init__(self, tmp: Path) -> None:
        self.conns: list[Any] = []
        self._tmp = tmp
        self._files: list[tuple[Any, Path, Any]] = []
        self._count = itertools.count()
        self.on = False

    def start(self, conn: Any) -> None:
        path = self._tmp / f"trace{next(self._count)}"
        out = path.open("w")
        conn.pgconn.trace(out.fileno())
        conn.pgconn.set_trace_flags(Trace.SUPPRESS_TIMESTAMPS | Trace.REGRESS_MODE)
        self._files.append((conn, path, out))

    def stop(self) -> list[str]:
        texts = []
        for conn, path, out in self._files:
            if not conn.closed:
                conn.pgconn.untrace()  # writes the trace out
            out.close()
            texts.append(path.read_text())
        self._files = []
        return texts


@pytest.fixture
def traced(monkeypatch: pytest.MonkeyPatch) -> Iterator[Tracer]:
    """Every pooled connection opened from now on can be traced (``round_trips``)."""
    configure = pgdb._configure
    with tempfile.TemporaryDirectory() as tmp:
        tracer = Tracer(Path(tmp))

        def keeping(conn: Any) -> None:
            configure(conn)
            tracer.conns.append(conn)
            if tracer.on:
                tracer.start(conn)

        monkeypatch.setattr(pgdb, "_configure", keeping)
        yield tracer


@contextmanager
def round_trips(tracer: Tracer) -> Iterator[list[str]]:
    """The messages the client waited after, on every traced connection, inside the block:
    "Sync", "Flush" or a simple query's text; and the statements parsed, as "Parse <text>"."""
    found: list[str] = []
    for conn in tracer.conns:
        if not conn.closed:
            tracer.start(conn)
    tracer.on = True
    try:
        yield found
    finally:
        tracer.on = False
        texts = tracer.stop()
    for text in texts:
        # a message per line, but a statement's own line breaks are written as they are
        last = ""
        for line in re.split(r"\n(?=[FB]\t)", text):
            fields = line.split("\t")
            if fields[0] != "F" or len(fields) < 3:
                continue
            kind = fields[2]
            if kind == "Sync" or kind == "Query" or (kind == "Flush" and last != "Sync"):
                found.append(fields[3].strip() if kind == "Query" else kind)
            elif kind == "Parse":
                found.append("Parse " + fields[3].split('"', 3)[3].rsplit('"', 1)[0].strip())
            last = kind


def waits(messages: list[str]) -> list[str]:
    return [m for m in messages if not m.startswith("Parse ")]


def statement(store: PostgresStore, words: list[str]) -> list[tuple[str, float]]:
    """The ranking of the SQL statement alone, in a snapshot of its own."""
    where = memory_filter(ALICE, SearchFilters())
    with store.memories._db.read_one() as conn:
        return fts.search(conn, ALICE.user_id, ALICE.scope_id, words, where, 50)[0]


def test_a_keyword_search_is_two_round_trips_and_one_more_for_missing_lists(
    traced: Tracer, pg_url: str
) -> None:
    store = PostgresStore(pg_url, max_connections=1)
    try:
        for text in ("tea in the garden", "green tea", "a garden of roses", "coffee", "tea"):
            add(store, ALICE, text)
        words = ["tea", "garden", "roses"]
        with round_trips(traced) as cold:
            first = store.memories.keyword_search(ALICE, words, SearchFilters(), 50)
        lists = [m for m in cold if m.startswith("Parse ") and "FROM memory_terms" in m]
        assert len(lists) == 1  # every missing list in one statement
        assert waits(cold) == ["Sync", "Sync", "Sync"]  # statistics, the lists, the ids
        with round_trips(traced) as warm:
            again = store.memories.keyword_search(ALICE, words, SearchFilters(), 50)
        # BEGIN, the catch-up and the statistics; the ids and COMMIT
        assert waits(warm) == ["Sync", "Sync"]
        assert first == again == statement(store, words)
        assert len(first) == 4
        add(store, ALICE, "roses and tea")  # patched from the log in the catch-up's snapshot
        with round_trips(traced) as patched:
            after = store.memories.keyword_search(ALICE, words, SearchFilters(), 50)
        assert after == statement(store, words) and len(after) == 5
        assert len(waits(patched)) == 3  # the changed memory's postings read once
    finally:
        store.close()


def test_a_filter_the_first_rows_fail_searches_again_in_a_snapshot_of_its_own(
    traced: Tracer, pg_url: str
) -> None:
    store = PostgresStore(pg_url, max_connections=1)
    try:
        size = fts.RESCORE_DEPTH + 100
        with store.transaction() as tx:
            made = tx.memories.insert_memories(
                ALICE,
                [NewMemory(text="tea", metadata={"k": int(i == size - 1)}) for i in range(size)],
                "t",
            )
        only = SearchFilters(metadata={"k": 1})
        store.memories.keyword_search(ALICE, ["tea"], only, 5)
        with round_trips(traced) as messages:
            found = store.memories.keyword_search(ALICE, ["tea"], only, 5)
        assert [i for i, _ in found] == [made[-1].id]
        begins = [m for m in messages if m.startswith("Parse BEGIN")]
        commits = [m for m in messages if m in ("Parse COMMIT", '"COMMIT"')]
        assert len(begins) == len(commits) == 2  # the first, then one that probes further
    finally:
        store.close()


def test_a_hybrid_search_reads_the_counts_with_the_vectors(traced: Tracer, pg_url: str) -> None:
    with Memory(pg_url, embedder=HashEmbedder(), workers=0) as memory:
        for text in ("tea with Mei in the garden", "the bus leaves at noon", "green tea"):
            memory.add(text, user_id="alice")
        memory.search("tea in the garden", user_id="alice")
        with round_trips(traced) as messages:
            result = memory.search("tea in the garden", user_id="alice")
        assert result.hits and not result.degraded
        counts = [m for m in messages if m.startswith("Parse") and "FROM tenant_counts" in m]
        assert len(counts) == 2  # the keyword statistics' and the vector search's, no third
        # keyword: 2; vector: 1; the candidates' texts, times and rows: 1
        assert len(waits(messages)) == 4


def test_a_hybrid_searchs_hits_are_the_memories_as_they_are_read_alone(pg_url: str) -> None:
    """The hits' rows come with the candidates' texts: every field as ``get_memories``
    reads it, whatever the row holds (metadata of every JSON kind, sources, no vector)."""
    metadata = {"k": 1, "f": 0.1, "big": 2**62, "s": 'caf\u00e9 "q"', "n": None, "l": [1, {}]}
    with Memory(pg_url, embedder=HashEmbedder(), workers=0) as memory:
        memory.add("tea with Mei in the garden", user_id="alice", metadata=metadata)
        memory.add("green tea in a session", user_id="alice", session_id="s1")
        memory.add("the tea garden at noon", user_id="alice")
        result = memory.search("tea in the garden", user_id="alice")
    store = PostgresStore(pg_url)
    try:
        alice = Scope(user_id="alice", scope_id=DEFAULT_ID)
        read = store.memories.get_memories(alice, [h.memory.id for h in result.hits])
    finally:
        store.close()
    [with_metadata] = [m for m in read if m.text.startswith("tea with")]
    assert len(read) == 3 and with_metadata.metadata == {**metadata, "role": "user"}
    assert [h.memory for h in result.hits] == read
