"""``omoide export`` / ``import`` across backends: a SQLite store's file imported into
PostgreSQL, exported from there and imported into a fresh SQLite store gives the same file at
every step; an export streams from one snapshot held across batches."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg

from omoide import Memory
from omoide.config import Settings
from omoide.embed import HashEmbedder
from omoide.store.ports.transfer import RECORD_KINDS
from omoide.types import SearchFilters
from tests.transfer.seed import ALICE, fill


def _memory(location: Path | str) -> Memory:
    """A library instance on a SQLite file (a path) or a PostgreSQL schema (a URL: given as
    ``DB_URL``, since ``Memory(path)`` takes a file)."""
    if isinstance(location, Path):
        return Memory(location, embedder=HashEmbedder(), workers=0)
    settings = Settings(db_url=location)
    return Memory(settings=settings, embedder=HashEmbedder(), workers=0)


def _open_transactions(url: str) -> int:
    """Sessions of the run's server inside a transaction, besides the one asking."""
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE state LIKE 'idle in transaction%'"
            " AND pid <> pg_backend_pid()"
        ).fetchone()
    return int(row[0]) if row else 0


def test_sqlite_to_postgres_to_sqlite_gives_the_same_file(tmp_path: Path, pg_url: str) -> None:
    first, second, third = (tmp_path / f"{n}.jsonl" for n in ("first", "second", "third"))
    with _memory(tmp_path / "source.db") as source:
        fill(source)
        exported = source.export(first)
    kinds = {json.loads(line)["kind"] for line in first.read_text().splitlines()[1:]}
    assert kinds == set(RECORD_KINDS)  # the seed holds one of every kind
    with _memory(pg_url) as postgres:
        assert postgres.store.location.startswith("postgresql://")
        assert postgres.import_file(first).records == exported.records
        postgres.export(second)
        assert postgres.import_file(second).total == 0  # everything is held: all skipped
        query = postgres.embedder.embed(["Alice grows cherry tomatoes"])[0]
        hits = postgres.store.memories.vector_search(ALICE, query, SearchFilters(), 1)
        keyword = postgres.store.memories.keyword_search(ALICE, ["cherry"], SearchFilters(), 5)
    assert second.read_bytes() == first.read_bytes()
    assert hits and hits[0][1] > 0.99  # the vector came along as it was
    assert keyword  # the full-text row follows the imported memory
    with _memory(tmp_path / "target.db") as target:
        assert target.import_file(second).records == exported.records
        target.export(third)
    assert third.read_bytes() == first.read_bytes()


def test_an_export_streams_from_one_snapshot(pg_url: str) -> None:
    with _memory(pg_url) as m:
        for n in range(5):
            m.add(f"note {n}", user_id="alice", scope_id="demo")
        stream = m.store.admin.export_records("alice", "demo", 2)
        kind, batch = next(stream)
        assert len(batch) <= 2
        m.add("written meanwhile", user_id="alice", scope_id="demo")  # not blocked
        texts = [r["text"] for k, b in [(kind, batch), *stream] for r in b if k == "memory"]
        assert texts == [f"note {n}" for n in range(5)]
        # Closing an export early ends its transaction (no export cursor stays open).
        stream = m.store.admin.export_records(None, None, 1)
        next(stream)
        assert _open_transactions(pg_url) == 1  # the export's snapshot
        stream.close()
        assert _open_transactions(pg_url) == 0
