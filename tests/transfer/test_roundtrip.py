"""Export, import into a fresh store, export again: the same file, and nothing lost."""

from __future__ import annotations

import json
import stat
from dataclasses import replace
from pathlib import Path

import pytest

from omoide import Memory
from omoide.embed import HashEmbedder
from omoide.store.ports.transfer import RECORD_FIELDS, RECORD_KINDS
from tests.transfer.seed import ALICE, BOB, fill


@pytest.fixture
def source(tmp_path: Path):
    with Memory(tmp_path / "source.db", embedder=HashEmbedder(), workers=0) as m:
        fill(m)
        yield m


def _fresh(path: Path) -> Memory:
    return Memory(path, embedder=HashEmbedder(), workers=0)


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_export_import_export_gives_the_same_file(source: Memory, tmp_path: Path) -> None:
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    report = source.export(first)
    assert stat.S_IMODE(first.stat().st_mode) == 0o600
    kinds = {line["kind"] for line in _lines(first)[1:]}
    assert kinds == set(RECORD_KINDS)  # the seed holds one of every kind
    assert report.total == len(_lines(first)) - 1
    with _fresh(tmp_path / "target.db") as target:
        imported = target.import_file(first)
        assert imported.records == report.records
        target.export(second)
    assert second.read_bytes() == first.read_bytes()


def test_every_record_has_exactly_the_documented_fields(source: Memory, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    source.export(out)
    lines = _lines(out)
    assert lines[0]["format"] == "omoide-export"
    assert lines[0]["embedding"] == {"model": "hash/256", "dim": 256}
    assert lines[0]["version"] == 2  # 2: schedules and scope configs
    order = [RECORD_KINDS.index(line["kind"]) for line in lines[1:]]
    assert order == sorted(order)
    for line in lines[1:]:
        kind = line.pop("kind")
        assert set(line) == set(RECORD_FIELDS[kind]), kind


def test_the_imported_store_answers_like_the_source(source: Memory, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    source.export(out)
    with _fresh(tmp_path / "target.db") as target:
        target.import_file(out)
        # Before running jobs: their scheduler claims the (long due) schedules.
        schedules = [m.store.schedules.list_schedules(None, None) for m in (source, target)]
        assert [s.scope for s in schedules[0]] == [ALICE, BOB]
        assert schedules[0][0].sweeps == 1 and schedules[0][0].last_job_id is not None
        # The run history comes along but the last sweep's job id does not (job ids do not).
        assert schedules[1] == [replace(s, last_job_id=None) for s in schedules[0]]
        configs = [m.store.schedules.get_scope_config(ALICE) for m in (source, target)]
        assert configs[0] == {"lang": "en", "b": {"y": None, "a": 1.5}} == configs[1]
        for m in (source, target):
            m.run_jobs()
        hits = [
            [
                h.memory.id
                for h in m.search("cherry tomatoes", user_id="alice", scope_id="demo").hits
            ]
            for m in (source, target)
        ]
        assert hits[0] and hits[0] == hits[1]
        # The keyword index (and its per-tenant statistics) covers the imported memories too.
        keyword = [
            [
                (h.memory.id, round(h.score, 6))
                for h in m.search(
                    "cherry tomatoes", user_id="alice", scope_id="demo", recipe="keyword"
                ).hits
            ]
            for m in (source, target)
        ]
        assert keyword[0] and keyword[0] == keyword[1]
        fact = next(
            i for i in source.get_all(user_id="alice", scope_id="demo").items if "cherry" in i.text
        )
        histories = [
            [
                e.model_dump(exclude={"id"})
                for e in m.history(fact.id, user_id="alice", scope_id="demo")
            ]
            for m in (source, target)
        ]
        assert len(histories[0]) == 2 and histories[0] == histories[1]  # ADD, then UPDATE
        assert target.get_variables(user_id="alice", scope_id="demo") == source.get_variables(
            user_id="alice", scope_id="demo"
        )
        assert target.store.chunks.chunk_state(ALICE, "chat-1") == source.store.chunks.chunk_state(
            ALICE, "chat-1"
        )
        graphs = [m.store.graph.list_relationships(ALICE, None, 10, 0) for m in (source, target)]
        assert graphs[0][1] == 1 and graphs[0] == graphs[1]
        entities = [m.store.graph.list_entities(ALICE, None, 10, 0) for m in (source, target)]
        assert entities[0] == entities[1]  # with their provenance episodes
        episodes = [
            m.store.sessions.list_episodes(ALICE, "chat-1", 10, 0) for m in (source, target)
        ]
        assert episodes[0] == episodes[1]  # messages and access counters
