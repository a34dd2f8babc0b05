"""WilmerAI discussion memory over real HTTP: trigger rules, the hash ledger, vector memories
with the fake LLM, keyword search (sanitising, the 60 cap, recency), recent memories, the
summary, and importing a WilmerAI directory."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import httpx
from typer.testing import CliRunner

from omoide.cli import app, state
from omoide.compat.wilmer import Wilmer
from omoide.compat.wilmer.discussions import recency_score, search_keywords
from omoide.store.protocol import NewMemory
from omoide.types import MemoryType
from tests.api.conftest import Running
from tests.compat.conftest import StartServer
from tests.fakes import FakeLLMServer

ALICE = {"user_id": "alice"}
VECTOR, V = MemoryType.SEMANTIC, {"wilmer": "vector"}  # a vector memory, as QualityMemory writes
SMALL = {"chunkEstimatedTokenSize": 10_000, "maxMessagesBetweenChunks": 2, "lookbackStartTurn": 0}


def _turns(n: int, start: int = 0) -> list[dict[str, str]]:
    roles = ("user", "assistant")
    return [{"role": roles[i % 2], "content": f"turn {i} about topic{i}"} for i in range(start, n)]


def _quality(http: httpx.Client, disc: str, messages: list[dict[str, str]], **opts: Any) -> Any:
    body = {"messages": messages, "options": {**SMALL, **opts}, **ALICE}
    response = http.post(f"/v1/discussions/{disc}/quality-memory", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def test_trigger_rules_and_resent_history(http: httpx.Client) -> None:
    history = [{"role": "system", "content": "be nice"}, *_turns(3)]
    first = _quality(http, "d1", history)
    # a new discussion is in consolidation mode: only the (high) token threshold applies
    assert (first["stored"], first["mode"], first["created"]) == (3, "consolidation", [])
    again = _quality(http, "d1", history)  # the same history, resent
    assert again["stored"] == 0 and again["mode"] == "standard"  # the "file" exists now
    assert len(again["created"]) == 1 and again["pending"] == 1  # by messages (2)
    assert _quality(http, "d1", history)["created"] == []  # nothing is chunked twice
    history += _turns(7, start=3)
    more = _quality(http, "d1", history)
    assert more["stored"] == 4 and len(more["created"]) == 2 and more["pending"] == 1
    # a front-truncated resend (a sliding context window) adds nothing either
    assert _quality(http, "d1", history[3:])["stored"] == 0
    recent = http.get("/v1/discussions/d1/recent-memories", params={"n": 1, **ALICE}).json()
    assert [m["type"] for m in recent["memories"]] == ["chunk"]
    # WilmerAI's text block: the contents joined by newlines, no roles
    assert recent["text"] == "turn 4 about topic4\nturn 5 about topic5"
    three = http.get("/v1/discussions/d1/recent-memories", params={"n": 5, **ALICE}).json()
    assert three["text"].count("--ChunkBreak--") == 2
    assert three["memories"][-1]["id"] == recent["memories"][0]["id"]
    # VectorMemorySearch searches vector memories only, as WilmerAI's: chunks are not hits
    hits = http.post("/v1/discussions/d1/search", json={"keywords": "topic5", **ALICE}).json()
    assert hits["hits"] == []


def test_token_threshold_and_lookback(http: httpx.Client) -> None:
    opts = {"chunkEstimatedTokenSize": 40, "lookbackStartTurn": 2}
    words = [{"role": "user", "content": "alpha beta gamma delta epsilon " * 2}] * 1
    below = _quality(http, "d2", [*words, *_turns(3, 1)], **opts)
    assert below["created"] == [] and below["mode"] == "consolidation"
    at = _quality(http, "d2", [*words, *_turns(9, 1)], **opts)
    assert len(at["created"]) >= 1


def test_stateless_recent_turns_and_summary(http: httpx.Client) -> None:
    body = {"messages": [{"role": "system", "content": "x"}, *_turns(4)], "n": 2}
    got = http.post("/v1/discussions/recent-turns", json=body).json()
    assert [t["content"] for t in got["turns"]] == ["turn 2 about topic2", "turn 3 about topic3"]
    missing = http.get("/v1/discussions/nope/summary", params=ALICE)
    assert missing.status_code == 404
    _quality(http, "d3", _turns(2))
    empty = http.get("/v1/discussions/d3/summary", params=ALICE).json()
    assert empty["summary"] is None


def test_vector_memory_needs_an_llm(http: httpx.Client) -> None:
    body = {"messages": _turns(4), "options": {"useVectorForQualityMemory": True}, **ALICE}
    response = http.post("/v1/discussions/v0/quality-memory", json=body)
    assert response.status_code == 501
    assert response.json()["error"]["code"] == "feature_disabled"
    assert http.get("/v1/discussions/v0/summary", params=ALICE).status_code == 404


VECTOR_REPLY = [
    {
        "title": "Offsite planning",
        "summary": "The team will meet in Portugal in spring.",
        "entities": ["Lisbon", "Acme Corp"],
        "key_phrases": ["team offsite", "budget review"],
    },
    {"title": "Catering", "summary": "Vegetarian food was requested.", "entities": []},
]


def test_vector_memories_with_the_fake_llm(
    start_server: StartServer, fake_llm: FakeLLMServer
) -> None:
    server = start_server(llm=fake_llm)
    fake_llm.enqueue(json.dumps(VECTOR_REPLY))
    with server.http() as http:
        vector = {"useVectorForQualityMemory": True, "chunkEstimatedTokenSize": 10}
        made = _quality(http, "v1", _turns(2), **vector)
        assert made["style"] == "vector" and len(made["created"]) == 2
        assert _quality(http, "v1", _turns(2), **vector)["created"] == []
        for keywords in ("Offsite planning", "lisbon", "acme corp", "budget review"):
            hits = http.post("/v1/discussions/v1/search", json={"keywords": keywords, **ALICE})
            memory = hits.json()["hits"][0]["memory"]
            assert memory["text"] == VECTOR_REPLY[0]["summary"], keywords
            assert memory["metadata"]["entities"] == ["Lisbon", "Acme Corp"]
        other = http.post("/v1/discussions/v1/search", json={"keywords": "vegetarian", **ALICE})
        assert other.json()["hits"][0]["memory"]["metadata"]["title"] == "Catering"
    assert len(fake_llm.requests) == 1


def test_keywords_are_safe_and_capped(server: Running) -> None:
    server.engine.add_many(
        [NewMemory("Lisbon trip", type=VECTOR, session_id="s", metadata=V)], **ALICE
    )
    assert len(search_keywords(";".join(f"w{i}" for i in range(100)))) == 60
    assert search_keywords('"a" OR b*; NEAR(x y);; ;"";(*)') == ["a OR b*", "NEAR(x y)"]
    nasty = ";".join(['"Lisbon', "NEAR(", "AND", "*", "col:x", '")', "OR OR"])
    with server.http() as http:
        found = http.post("/v1/discussions/s/search", json={"keywords": nasty, **ALICE})
        assert found.status_code == 200, found.text
        assert found.json()["hits"][0]["memory"]["text"] == "Lisbon trip"
        many = ";".join([*(f"zz{i}" for i in range(60)), "lisbon"])  # the 61st is dropped
        capped = http.post("/v1/discussions/s/search", json={"keywords": many, **ALICE}).json()
        assert len(capped["keywords"]) == 60 and capped["hits"] == []


def test_recency_reorders(server: Running) -> None:
    day = 86_400_000
    now = int(time.time() * 1000)
    old = NewMemory(
        "tea tea tea", type=VECTOR, session_id="r", metadata=V, created_at_ms=now - 90 * day
    )
    new = NewMemory("tea and cake", type=VECTOR, session_id="r", metadata=V, created_at_ms=now)
    server.engine.add_many([old, new], **ALICE)
    with server.http() as http:
        plain = http.post("/v1/discussions/r/search", json={"keywords": "tea", **ALICE}).json()
        assert [h["memory"]["text"] for h in plain["hits"]] == ["tea tea tea", "tea and cake"]
        body = {"keywords": "tea", "recency": True, **ALICE}
        decayed = http.post("/v1/discussions/r/search", json=body).json()
        assert [h["memory"]["text"] for h in decayed["hits"]] == ["tea and cake", "tea tea tea"]
    assert recency_score(1.0, now - 30 * day, now, 30.0) == 0.5


LAST = hashlib.sha256(b"turn 1 about topic1").hexdigest()  # WilmerAI: sha256(content)


def _wilmer_dir(root: Path) -> Path:
    root.mkdir()
    chunks = [["We chose Lisbon for the offsite.", "h1"], ["Budget is 10k euros.", LAST]]
    (root / "disc-9_memories.jsonl").write_text(json.dumps(chunks))
    summary = {"text_block": "Planning a Lisbon offsite on a 10k budget.", "hash": LAST}
    (root / "disc-9_summary.jsonl").write_text(json.dumps(summary) + "\n")
    with sqlite3.connect(root / "disc-9_vector_memory.db") as conn:
        conn.execute(
            "CREATE TABLE memories (id INTEGER PRIMARY KEY, memory_text TEXT,"
            " metadata_json TEXT, date_added TEXT)"
        )
        meta = {"title": "Venue", "entities": ["Alfama Hall"], "key_phrases": ["venue booking"]}
        conn.execute(
            "INSERT INTO memories (memory_text, metadata_json, date_added) VALUES (?, ?, ?)",
            ("The venue is booked.", json.dumps(meta), "2024-05-01T10:00:00"),
        )
        conn.execute("CREATE TABLE vector_memory_tracker (discussion_id TEXT, last_hash TEXT)")
        last = hashlib.sha256(b"turn 1 about topic1").hexdigest()
        conn.execute("INSERT INTO vector_memory_tracker VALUES ('disc-9', ?)", (last,))
    conn.close()
    return root


def test_import_is_idempotent_and_continues(server: Running, tmp_path: Path) -> None:
    directory = _wilmer_dir(tmp_path / "wilmer")
    calls: list[tuple[int, int]] = []
    first = Wilmer.of(server.engine).importer.import_wilmer(
        directory, **ALICE, progress=lambda d, t: calls.append((d, t))
    )
    assert (first.chunks, first.summaries, first.vector_memories, first.trackers) == (2, 1, 1, 1)
    assert calls[-1] == (1, 1)  # one discussion
    second = Wilmer.of(server.engine).importer.import_wilmer(directory, **ALICE)
    assert (second.chunks, second.summaries, second.vector_memories) == (0, 0, 0)
    assert second.skipped == 4
    with server.http() as http:
        summary = http.get("/v1/discussions/disc-9/summary", params=ALICE).json()
        assert (
            summary["summary"].startswith("Planning a Lisbon")
            and summary["last_chunk_hash"] == LAST
        )
        recent = http.get("/v1/discussions/disc-9/recent-memories", params=ALICE).json()
        assert [m["text"] for m in recent["memories"]][-1] == "Budget is 10k euros."
        hit = http.post("/v1/discussions/disc-9/search", json={"keywords": "alfama hall", **ALICE})
        assert hit.json()["hits"][0]["memory"]["text"] == "The venue is booked."
        # the conversation WilmerAI had chunked up to turn 1 continues after it
        went_on = _quality(http, "disc-9", _turns(4))
        assert went_on["mode"] == "standard" and len(went_on["created"]) == 1
        last = http.get("/v1/discussions/disc-9/recent-memories", params={"n": 1, **ALICE})
        assert last.json()["text"] == "turn 2 about topic2\nturn 3 about topic3"


def test_import_cli(tmp_path: Path, monkeypatch: Any) -> None:
    directory = _wilmer_dir(tmp_path / "wilmer")
    db = tmp_path / "cli.db"
    monkeypatch.setenv("OMOIDE_EMBEDDER", "hash")
    monkeypatch.setenv("OMOIDE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(state, "settings", None)
    runner = CliRunner()
    args = ["--db", str(db), "import", "wilmer", str(directory), "--user", "alice", "--json"]
    done = runner.invoke(app, args)
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["chunks"] == 2
    assert json.loads(runner.invoke(app, args).stdout)["chunks"] == 0
