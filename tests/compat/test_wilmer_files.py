"""WilmerAI's real files: the current, per-API-key, legacy and .jsonl layouts, per-discussion
reports, bad and encrypted files, symlinks, export back and ``import(export(x))``, and
VectorMemorySearch over vector memories only. Fixtures are written here by hand in WilmerAI's
formats: ``[{"text_block", "hash"}]`` JSON, and its vector database schema."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from contextlib import closing
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from omoide.cli import app, state
from omoide.compat.wilmer import Wilmer
from omoide.types import MemoryType
from tests.api.conftest import Running
from tests.compat.conftest import StartServer

ALICE = {"user_id": "alice"}


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def write_chunks(path: Path, records: list[tuple[str, str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = [{"text_block": t, "hash": h} for t, h in records]
    path.write_text(json.dumps(data, indent=4))


def write_vector_db(path: Path, disc: str, memories: list[dict[str, Any]], last: str) -> None:
    """WilmerAI's schema: memories, memories_fts (porter), vector_memory_hash_log."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute(
            "CREATE TABLE memories (id INTEGER PRIMARY KEY, discussion_id TEXT NOT NULL,"
            " memory_text TEXT NOT NULL, date_added TEXT NOT NULL, metadata_json TEXT)"
        )
        conn.execute(
            "CREATE VIRTUAL TABLE memories_fts USING fts5(title, summary, entities,"
            " key_phrases, memory_text_unweighted, tokenize='porter')"
        )
        conn.execute(
            "CREATE TABLE vector_memory_hash_log (id INTEGER PRIMARY KEY AUTOINCREMENT,"
            " discussion_id TEXT NOT NULL, message_hash TEXT NOT NULL, timestamp DATETIME NOT NULL)"
        )
        for meta in memories:
            cur = conn.execute(
                "INSERT INTO memories (discussion_id, memory_text, date_added, metadata_json)"
                " VALUES (?, ?, ?, ?)",
                (disc, meta["summary"], "2025-03-01T09:30:00+00:00", json.dumps(meta)),
            )
            conn.execute(
                "INSERT INTO memories_fts VALUES (?, ?, ?, ?, ?)",
                (
                    meta["title"],
                    meta["summary"],
                    " ".join(meta["entities"]),
                    " ".join(meta["key_phrases"]),
                    meta["summary"],
                ),
            )
            assert cur.lastrowid
        for when, digest in (("2025-03-01T09:00:00+00:00", "older"), ("2025-03-01T10:00:00", last)):
            conn.execute(
                "INSERT INTO vector_memory_hash_log (discussion_id, message_hash, timestamp)"
                " VALUES (?, ?, ?)",
                (disc, digest, when),
            )


VENUE = {
    "title": "Venue",
    "summary": "The Alfama Hall venue is booked.",
    "entities": ["Alfama Hall"],
    "key_phrases": ["venue booking"],
    "topics": ["offsite"],
}


def current_layout(root: Path) -> Path:
    """Public/DiscussionIds/<id>/..., a per-API-key folder, and a legacy discussion."""
    ids = root / "Public" / "DiscussionIds"
    write_chunks(ids / "trip" / "memories.json", [("Lisbon it is.", sha("ok, Lisbon"))])
    write_chunks(ids / "trip" / "chat_summary.json", [("Planning Lisbon.", sha("ok, Lisbon"))])
    write_vector_db(ids / "trip" / "vector_memory.db", "trip", [VENUE], sha("last message"))
    write_chunks(ids / "0123456789abcdef" / "keyed" / "memories.json", [("Keyed chunk.", "k1")])
    write_chunks(ids / "old_memories.json", [("Legacy chunk one.", "l1"), ("Two.", "l2")])
    write_chunks(ids / "old_chat_summary.json", [("Legacy summary.", "l2")])
    write_vector_db(root / "Public" / "old_vector_memory.db", "old", [], sha("legacy last"))
    return root


def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> Any:
    monkeypatch.setenv("OMOIDE_EMBEDDER", "hash")
    monkeypatch.setenv("OMOIDE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(state, "settings", None)
    return CliRunner().invoke(app, ["--db", str(tmp_path / "cli.db"), *args])


def test_cli_reads_every_layout_and_reports_each_discussion(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = current_layout(tmp_path / "WilmerAI")
    done = cli(tmp_path, monkeypatch, "import", "wilmer", str(root), "--user", "alice", "--json")
    assert done.exit_code == 0, done.output
    report = {d["discussion_id"]: d for d in json.loads(done.stdout)["discussions"]}
    assert sorted(report) == ["keyed", "old", "trip"]
    trip = report["trip"]
    assert (trip["chunks"], trip["summary"], trip["vector_memories"], trip["tracker"]) == (
        1,
        True,
        1,
        True,
    )
    assert trip["files"]["memories"] == "Public/DiscussionIds/trip/memories.json"
    assert report["keyed"]["key_folder"] == "0123456789abcdef"
    old = report["old"]
    assert (old["chunks"], old["summary"], old["tracker"]) == (2, True, True)
    assert old["files"]["vector"] == "Public/old_vector_memory.db"
    again = cli(tmp_path, monkeypatch, "import", "wilmer", str(root), "--user", "alice")
    assert again.exit_code == 0, again.output
    unchanged = "trip: 0 chunks, 0 summary, 0 vector memories, tracker unchanged, 3 already"
    assert unchanged in again.stdout


def test_nothing_recognisable_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "nothing"
    (empty / "sub").mkdir(parents=True)
    (empty / "notes.txt").write_text("hello")
    done = cli(tmp_path, monkeypatch, "import", "wilmer", str(empty))
    assert done.exit_code == 1
    assert "no WilmerAI discussion found" in done.output and "Traceback" not in done.output


def test_a_bad_file_fails_its_discussion_only_and_whole(
    server: Running, http: httpx.Client, tmp_path: Path
) -> None:
    root = tmp_path / "DiscussionIds"
    write_chunks(root / "good" / "memories.json", [("Fine chunk.", "g1")])
    write_chunks(root / "half" / "memories.json", [("Would be imported.", "h1")])
    write_vector_db(root / "half" / "vector_memory.db", "half", [VENUE], "x")
    with closing(sqlite3.connect(root / "half" / "vector_memory.db")) as conn, conn:
        conn.execute("UPDATE memories SET metadata_json = '{broken'")
    (root / "bad").mkdir()
    (root / "bad" / "chat_summary.json").write_text('[{"text_block": "x", "hash": ')
    (root / "secret").mkdir()
    (root / "secret" / "memories.json").write_bytes(b"gAAAAABnX2l0c2FzZWNyZXRfdG9rZW5fYnl0ZXM=")
    result = Wilmer.of(server.engine).importer.import_wilmer(root, **ALICE)
    report = {d.discussion_id: d for d in result.discussions}
    assert result.failed == 3 and report["good"].error is None and report["good"].chunks == 1
    assert "vector_memory.db" in str(report["half"].error)
    assert "metadata_json" in str(report["half"].error)
    assert str(report["bad"].error).startswith("chat_summary.json: not JSON")
    assert "encrypted" in str(report["secret"].error)
    for disc in ("half", "bad", "secret"):  # nothing of a failed discussion was written
        got = http.get(f"/v1/discussions/{disc}/recent-memories", params=ALICE)
        assert got.status_code == 404, disc


def test_cli_names_the_bad_file_and_exits_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "DiscussionIds"
    write_chunks(root / "good" / "memories.json", [("Fine chunk.", "g1")])
    (root / "bad").mkdir()
    (root / "bad" / "memories.json").write_text('{"text_block": 1, "hash": "x"}')
    done = cli(tmp_path, monkeypatch, "import", "wilmer", str(root))
    assert done.exit_code == 1 and "Traceback" not in done.output
    assert "bad: not imported: memories.json: record 1 has a text that is not a string" in (
        done.stdout
    )
    assert "good: 1 chunks" in done.stdout


def test_symlinks_leaving_the_directory_are_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = tmp_path / "outside"
    write_chunks(outside / "memories.json", [("Somebody else's.", "o1")])
    root = tmp_path / "DiscussionIds"
    write_chunks(root / "mine" / "memories.json", [("Mine.", "m1")])
    (root / "theirs").symlink_to(outside, target_is_directory=True)
    (root / "mine" / "chat_summary.json").symlink_to(outside / "memories.json")
    done = cli(tmp_path, monkeypatch, "import", "wilmer", str(root), "--json")
    assert done.exit_code == 0, done.output
    result = json.loads(done.stdout)
    assert [d["discussion_id"] for d in result["discussions"]] == ["mine"]
    assert result["discussions"][0]["summary"] is False
    assert any(i.startswith("theirs: a symlink leaving") for i in result["ignored"])
    assert any(i.startswith("mine/chat_summary.json: a symlink") for i in result["ignored"])


def _state(http: httpx.Client, disc: str) -> dict[str, Any]:
    recent = http.get(f"/v1/discussions/{disc}/recent-memories", params={"n": 100, **ALICE})
    summary = http.get(f"/v1/discussions/{disc}/summary", params=ALICE).json()
    hits = http.post(f"/v1/discussions/{disc}/search", json={"keywords": "alfama", **ALICE})
    return {
        "chunks": [(m["text"], m["metadata"]["wilmer_hash"]) for m in recent.json()["memories"]],
        "summary": (summary["summary"], summary["last_chunk_hash"]),
        "vector": [
            (
                h["memory"]["text"],
                h["memory"]["metadata"]["wilmer_metadata"],
                h["memory"]["created_at"],
            )
            for h in hits.json()["hits"]
        ],
    }


def test_export_then_import_is_lossless(start_server: StartServer, tmp_path: Path) -> None:
    first, second = start_server(), start_server()
    source = current_layout(tmp_path / "WilmerAI")
    Wilmer.of(first.engine).importer.import_wilmer(source, **ALICE)
    out = tmp_path / "back" / "DiscussionIds"
    exported = Wilmer.of(first.engine).exporter.export_wilmer(out, "trip", **ALICE)
    assert (exported.chunks, exported.summary, exported.vector_memories) == (1, True, 1)
    # WilmerAI's own formats: JSON records, and a database its bm25 query can search
    assert json.loads((out / "trip" / "memories.json").read_text()) == [
        {"text_block": "Lisbon it is.", "hash": sha("ok, Lisbon")}
    ]
    with closing(sqlite3.connect(out / "trip" / "vector_memory.db")) as conn:
        found = conn.execute(
            "SELECT m.memory_text, bm25(memories_fts) FROM memories_fts AS fts"
            " JOIN memories AS m ON fts.rowid = m.id WHERE memories_fts MATCH ?",
            ('"venue booking" OR "nothing"',),
        ).fetchall()
        tracker = conn.execute("SELECT message_hash FROM vector_memory_hash_log").fetchall()
    assert [r[0] for r in found] == [VENUE["summary"]] and tracker == [(sha("last message"),)]
    Wilmer.of(second.engine).importer.import_wilmer(out, **ALICE)
    with first.http() as a, second.http() as b:
        assert _state(a, "trip") == _state(b, "trip")
        assert _state(b, "trip")["vector"][0][1] == VENUE  # topics kept too
    again = Wilmer.of(first.engine).importer.import_wilmer(out, **ALICE)
    assert (again.chunks, again.summaries, again.vector_memories, again.trackers) == (0, 0, 0, 0)
    with pytest.raises(Exception, match="not overwriting"):
        Wilmer.of(first.engine).exporter.export_wilmer(out, "trip", **ALICE)


def test_export_cli_and_omoide_chunks_use_wilmer_hashes(
    server: Running, http: httpx.Client, tmp_path: Path
) -> None:
    turns = [{"role": ("user", "assistant")[i % 2], "content": f"line {i}"} for i in range(4)]
    opts = {
        "chunkEstimatedTokenSize": 10_000,
        "maxMessagesBetweenChunks": 2,
        "lookbackStartTurn": 0,
    }
    body = {"messages": turns, "options": opts, **ALICE}
    for _ in range(2):
        assert http.post("/v1/discussions/w2/quality-memory", json=body).status_code == 200
    out = tmp_path / "DiscussionIds"
    Wilmer.of(server.engine).exporter.export_wilmer(out, "w2", **ALICE)
    records = json.loads((out / "w2" / "memories.json").read_text())
    assert records[0] == {"text_block": "line 0\nline 1", "hash": sha("line 1")}


def test_vector_search_is_not_crowded_out_by_chunks(
    http: httpx.Client, tmp_path: Path, server: Running
) -> None:
    root = tmp_path / "DiscussionIds"
    chunks = [(f"Lisbon Lisbon Lisbon note {i}.", f"c{i}") for i in range(10)]
    write_chunks(root / "busy" / "memories.json", chunks)
    meta = {**VENUE, "summary": "Offsite in Lisbon at the hall."}
    write_vector_db(root / "busy" / "vector_memory.db", "busy", [meta], "z")
    Wilmer.of(server.engine).importer.import_wilmer(root, **ALICE)
    body = {"keywords": "Lisbon;hall", "limit": 5, **ALICE}
    hits = http.post("/v1/discussions/busy/search", json=body).json()["hits"]
    assert [h["memory"]["text"] for h in hits] == ["Offsite in Lisbon at the hall."]


def test_chunks_sharing_a_hash_are_all_imported_once(
    server: Running, http: httpx.Client, tmp_path: Path
) -> None:
    """WilmerAI hashes a chunk by its last message, so two chunks both ending in "ok" share a
    hash; its memory file keeps both, and so must an import (and a re-import adds neither)."""
    root = tmp_path / "DiscussionIds"
    records = [("Trams in Lisbon.\nok", sha("ok")), ("Cafes in Porto.\nok", sha("ok"))]
    write_chunks(root / "rep" / "memories.json", records)
    importer = Wilmer.of(server.engine).importer
    first = importer.import_wilmer(root, **ALICE)
    assert (first.chunks, first.failed) == (2, 0)
    again = importer.import_wilmer(root, **ALICE)
    assert (again.chunks, again.discussions[0].already) == (0, 2)
    write_chunks(root / "rep" / "memories.json", [*records, ("Trains to Faro.\nok", sha("ok"))])
    grown = importer.import_wilmer(root, **ALICE)
    assert (grown.chunks, grown.discussions[0].already) == (1, 2)
    recent = http.get("/v1/discussions/rep/recent-memories", params={"n": 10, **ALICE}).json()
    texts = sorted(m["text"] for m in recent["memories"])
    assert texts == ["Cafes in Porto.\nok", "Trains to Faro.\nok", "Trams in Lisbon.\nok"]
    out = tmp_path / "back"
    Wilmer.of(server.engine).exporter.export_wilmer(out, "rep", **ALICE)
    exported = json.loads((out / "rep" / "memories.json").read_text())
    assert [(r["text_block"], r["hash"]) for r in exported] == [
        *records,
        ("Trains to Faro.\nok", sha("ok")),
    ]
    # QualityMemory continues after the last imported chunk's message
    turns = ["Trams?", "ok", "Cafes?", "ok", "Faro?", "ok", "new one", "new two"]
    body = {
        "messages": [
            {"role": ("user", "assistant")[i % 2], "content": c} for i, c in enumerate(turns)
        ],
        "options": {
            "chunkEstimatedTokenSize": 10_000,
            "maxMessagesBetweenChunks": 2,
            "lookbackStartTurn": 0,
        },
        **ALICE,
    }
    assert http.post("/v1/discussions/rep/quality-memory", json=body).status_code == 200
    recent = http.get("/v1/discussions/rep/recent-memories", params={"n": 10, **ALICE}).json()
    assert "new one\nnew two" in [m["text"] for m in recent["memories"]]
    assert len(recent["memories"]) == 4


def test_summary_text_is_the_first_record_and_its_hash_the_last(
    server: Running, http: httpx.Client, tmp_path: Path
) -> None:
    """WilmerAI's summary reader: the text of the first record, the covered-up-to hash of the
    last (``get_current_summary`` and ``find_how_many_new_memories_since_last_summary``)."""
    root = tmp_path / "DiscussionIds"
    write_chunks(root / "s" / "memories.json", [("One.", "h1"), ("Two.", "h2")])
    write_chunks(root / "s" / "chat_summary.json", [("Current summary.", "h1"), ("Old.", "h2")])
    assert Wilmer.of(server.engine).importer.import_wilmer(root, **ALICE).summaries == 1
    summary = http.get("/v1/discussions/s/summary", params=ALICE).json()
    assert (summary["summary"], summary["last_chunk_hash"]) == ("Current summary.", "h2")


def test_export_of_chunks_made_by_omoide_carries_wilmer_hashes(
    server: Running, tmp_path: Path
) -> None:
    """Chunks omoide's own chunk job made (messages through /v1, not QualityMemory) are
    exported with WilmerAI's hash of their last message, so WilmerAI finds where its memories
    end instead of chunking the whole discussion again."""
    memory = server.engine
    turns = [
        {"role": ("user", "assistant")[i % 2], "content": f"turn {i}" + " word" * 80}
        for i in range(40)
    ]
    memory.add_messages(turns, session_id="eng", **ALICE)
    made = memory.update_chunks("eng", **ALICE)
    assert made.chunks
    out = tmp_path / "DiscussionIds"
    Wilmer.of(memory).exporter.export_wilmer(out, "eng", **ALICE)
    records = json.loads((out / "eng" / "memories.json").read_text())
    contents = {sha(t["content"]) for t in turns}
    assert records and all(r["hash"] in contents for r in records)


@pytest.mark.parametrize("layout", ["current", "legacy"])
def test_the_condensation_tracker_survives_import_and_export(
    server: Running, tmp_path: Path, layout: str
) -> None:
    """WilmerAI's memory condensation (``condenseMemories``) keeps the hash of the last memory
    it condensed in ``condensation_tracker.json``; without it, it treats every memory as new
    and condenses the already-condensed ones again."""
    root = tmp_path / "DiscussionIds"
    records = [("Condensed: the first week.", "h3"), ("Booked the hall.", "h4")]
    tracker = {"lastCondensationHash": "h3"}
    if layout == "current":
        write_chunks(root / "c" / "memories.json", records)
        (root / "c" / "condensation_tracker.json").write_text(json.dumps(tracker, indent=4))
    else:
        write_chunks(root / "c_memories.json", records)
        (root / "c_condensation_tracker.json").write_text(json.dumps(tracker))
    imported = Wilmer.of(server.engine).importer.import_wilmer(root, **ALICE)
    assert imported.discussions[0].condensation is True
    again = Wilmer.of(server.engine).importer.import_wilmer(root, **ALICE)
    assert again.discussions[0].condensation is False  # already there
    out = tmp_path / "back"
    exported = Wilmer.of(server.engine).exporter.export_wilmer(out, "c", **ALICE)
    assert exported.condensation is True
    assert json.loads((out / "c" / "condensation_tracker.json").read_text()) == tracker
    assert json.loads((out / "c" / "memories.json").read_text())[0]["hash"] == "h3"


def test_a_condensation_tracker_that_is_not_an_object_fails_its_discussion(
    server: Running, tmp_path: Path
) -> None:
    root = tmp_path / "DiscussionIds"
    write_chunks(root / "bad" / "memories.json", [("One.", "h1")])
    (root / "bad" / "condensation_tracker.json").write_text('["h1"]')
    report = Wilmer.of(server.engine).importer.import_wilmer(root, **ALICE).discussions[0]
    assert report.error is not None and "condensation_tracker.json" in report.error
    assert report.chunks == 0


def said(when: str) -> str:
    """A time as WilmerAI's timestamps file holds it."""
    return datetime.strptime(when, "%Y-%m-%d %H:%M:%S").strftime("(%A, %Y-%m-%d %H:%M:%S)")


def local_ms(when: str) -> int:
    """WilmerAI writes its host's local time with no zone; the import reads it in its own."""
    return int(datetime.strptime(when, "%Y-%m-%d %H:%M:%S").timestamp() * 1000)


@pytest.mark.parametrize("layout", ["current", "keyed", "legacy"])
def test_the_timestamps_file_survives_import_and_export(
    server: Running, tmp_path: Path, layout: str
) -> None:
    """WilmerAI keeps when each message was said in ``timestamps.json`` (by the SHA-256 of its
    content) and prefixes messages with it; without the file it dates the whole history anew.
    A chunk takes the time of its last message, its hash."""
    root = tmp_path / "DiscussionIds"
    first, second = sha("I booked the hall."), sha("Great, what date?")
    records = [("We talked about the venue.", first), ("We talked about the date.", second)]
    stamps = {
        sha("Hello!"): said("2025-08-04 18:29:00"),
        first: said("2025-08-04 18:30:00"),
        second: said("2025-08-04 18:31:10"),
        "PLACEHOLDER_TIMESTAMP_HASH_0000": said("2025-08-04 18:32:00"),
    }
    if layout != "legacy":
        folder = root / ("0123456789abcdef" if layout == "keyed" else "") / "t"
        write_chunks(folder / "memories.json", records)
        (folder / "timestamps.json").write_text(json.dumps(stamps, indent=4))
    else:
        write_chunks(root / "t_memories.json", records)
        (root / "t_timestamps.json").write_text(json.dumps(stamps))
    wilmer = Wilmer.of(server.engine)
    imported = wilmer.importer.import_wilmer(root, **ALICE).discussions[0]
    assert (imported.timestamps, imported.dated, imported.error) == (True, 2, None)
    chunks = server.engine.session_memories("t", types=[MemoryType.CHUNK], **ALICE)
    assert sorted(int(c.created_at.timestamp() * 1000) for c in chunks) == [
        local_ms("2025-08-04 18:30:00"),
        local_ms("2025-08-04 18:31:10"),
    ]
    again = wilmer.importer.import_wilmer(root, **ALICE).discussions[0]
    assert (again.timestamps, again.chunks, again.already) == (False, 0, 2)
    out = tmp_path / "back"
    exported = wilmer.exporter.export_wilmer(out, "t", **ALICE)
    assert exported.timestamps is True
    assert json.loads((out / "t" / "timestamps.json").read_text()) == stamps
    back = json.loads((out / "t" / "memories.json").read_text())
    assert [(r["text_block"], r["hash"]) for r in back] == records


def test_chunks_keep_the_import_time_when_wilmer_times_would_reorder_them(
    server: Running, tmp_path: Path
) -> None:
    """Times that fall in file order would reorder the chunks WilmerAI reads in file order:
    none is dated, and the file is still kept for the export."""
    root = tmp_path / "DiscussionIds"
    records = [("Venue.", sha("a")), ("Date.", sha("b"))]
    write_chunks(root / "r" / "memories.json", records)
    stamps = {sha("a"): said("2025-08-04 18:31:00"), sha("b"): said("2025-08-04 18:30:00")}
    (root / "r" / "timestamps.json").write_text(json.dumps(stamps))
    report = Wilmer.of(server.engine).importer.import_wilmer(root, **ALICE).discussions[0]
    assert (report.timestamps, report.dated, report.chunks) == (True, 0, 2)
    out = tmp_path / "back"
    Wilmer.of(server.engine).exporter.export_wilmer(out, "r", **ALICE)
    back = json.loads((out / "r" / "memories.json").read_text())
    assert [r["hash"] for r in back] == [sha("a"), sha("b")]


@pytest.mark.parametrize(
    "content",
    [
        '["(Monday, 2025-08-04 18:30:00)"]',
        '{"h1": 5}',
        '{"h1": "(Monday, 2025-08-04 18:30:00)", "h2": ',
        '{"h\\u0000": "(Monday, 2025-08-04 18:30:00)"}',
        '{"h1": "\\ud800"}',
        '{"h1": ' + "[" * 100 + "]" * 100 + "}",
    ],
    ids=["array", "number", "truncated", "nul", "surrogate", "nested"],
)
def test_a_bad_timestamps_file_fails_its_discussion_only(
    server: Running, tmp_path: Path, content: str
) -> None:
    root = tmp_path / "DiscussionIds"
    write_chunks(root / "bad" / "memories.json", [("One.", "h1")])
    (root / "bad" / "timestamps.json").write_text(content)
    write_chunks(root / "good" / "memories.json", [("Two.", "h2")])
    (root / "good" / "timestamps.json").write_text(json.dumps({"h2": said("2025-08-04 18:30:00")}))
    result = Wilmer.of(server.engine).importer.import_wilmer(root, **ALICE)
    bad, good = result.discussions
    assert bad.error is not None and "timestamps.json" in bad.error
    assert (bad.chunks, bad.timestamps, result.failed) == (0, False, 1)
    assert (good.error, good.chunks, good.timestamps) == (None, 1, True)


def test_a_time_no_clock_can_place_dates_no_chunk(server: Running, tmp_path: Path) -> None:
    """Year 1 has no POSIX time here ("year 0 is out of range": a traceback out of the import,
    nothing of any discussion imported): the chunk keeps the import time, the file is kept."""
    root = tmp_path / "DiscussionIds"
    write_chunks(root / "y" / "memories.json", [("Venue.", sha("a"))])
    stamps = {sha("a"): "(Monday, 0001-01-01 00:00:00)"}
    (root / "y" / "timestamps.json").write_text(json.dumps(stamps))
    report = Wilmer.of(server.engine).importer.import_wilmer(root, **ALICE).discussions[0]
    assert (report.error, report.chunks, report.dated, report.timestamps) == (None, 1, 0, True)
