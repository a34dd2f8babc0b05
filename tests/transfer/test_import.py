"""Import rules: idempotent, embedding signature checked, --reembed queues the vectors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from omoide import Memory
from omoide.embed import HashEmbedder
from omoide.errors import Conflict, InvalidInput
from omoide.types import JobState
from tests.transfer.seed import ALICE, fill


@pytest.fixture
def exported(tmp_path: Path) -> Path:
    out = tmp_path / "export.jsonl"
    with Memory(tmp_path / "source.db", embedder=HashEmbedder(), workers=0) as source:
        fill(source)
        source.export(out)
    return out


def test_importing_twice_changes_nothing(exported: Path, tmp_path: Path) -> None:
    with Memory(tmp_path / "target.db", embedder=HashEmbedder(), workers=0) as target:
        first = target.import_file(exported)
        stats = target.store.admin.stats()
        again = target.import_file(exported)
        assert again.total == 0 and sum(again.skipped.values()) == first.total
        assert target.store.admin.stats() == stats
        target.export(tmp_path / "after.jsonl")
    assert (tmp_path / "after.jsonl").read_bytes() == exported.read_bytes()


def test_another_embedding_model_is_refused(exported: Path, tmp_path: Path) -> None:
    with Memory(tmp_path / "target.db", embedder=HashEmbedder(dim=64), workers=0) as target:
        with pytest.raises(Conflict, match="--reembed"):
            target.import_file(exported)
        assert target.store.admin.stats()["memories"] == 0  # refused before writing anything


def test_a_store_embedded_with_another_model_refuses_too(exported: Path, tmp_path: Path) -> None:
    with Memory(tmp_path / "target.db", embedder=HashEmbedder(dim=64), workers=0) as target:
        target.add("already here", user_id="carol")  # records hash/64 as the store's model
        target.embedder = HashEmbedder()  # even with the file's embedder configured now
        with pytest.raises(Conflict, match="hash/64"):
            target.import_file(exported)


def test_reembed_drops_the_vectors_and_queues_embed_jobs(exported: Path, tmp_path: Path) -> None:
    with Memory(tmp_path / "target.db", embedder=HashEmbedder(dim=64), workers=0) as target:
        report = target.import_file(exported, reembed=True)
        assert report.embed_jobs == 3  # alice's memories, bob's memories, alice's entities
        jobs = target.list_jobs(state=JobState.PENDING)
        assert {j.kind for j in jobs} == {"embed", "embed_entities"}
        page = target.get_all(user_id="alice", scope_id="demo")
        assert page.total and not any(item.embedded for item in page.items)
        assert target.run_jobs() >= 3
        hits = target.search("cherry tomatoes", user_id="alice", scope_id="demo", recipe="vector")
        assert "cherry" in hits.hits[0].memory.text
        assert target.store.admin.get_meta("embedding_model") == "hash/64"
        again = target.import_file(exported, reembed=True)
        assert again.total == 0 and again.embed_jobs == 0  # nothing new, nothing queued


def test_one_tenant_only(exported: Path, tmp_path: Path) -> None:
    with Memory(tmp_path / "source.db", embedder=HashEmbedder(), workers=0) as source:
        source.export(tmp_path / "alice.jsonl", user_id="alice", scope_id="demo")
        source.export(tmp_path / "bob.jsonl", user_id="bob")
        with pytest.raises(InvalidInput, match="--user"):
            source.export(tmp_path / "x.jsonl", scope_id="demo")
    for name, user in (("alice", "alice"), ("bob", "bob")):
        lines = [json.loads(line) for line in (tmp_path / f"{name}.jsonl").read_text().splitlines()]
        assert lines[0]["tenant"]["user_id"] == user
        assert {line["user_id"] for line in lines[1:]} == {user}
    with Memory(tmp_path / "target.db", embedder=HashEmbedder(), workers=0) as target:
        target.import_file(tmp_path / "alice.jsonl")
        assert target.get_all(user_id="bob", scope_id="demo").total == 0
        assert target.get_all(user_id="alice", scope_id="demo").total > 0
        assert target.store.sessions.get_session(ALICE, "chat-1").project == "garden"


def test_a_file_that_is_no_export_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"hello": 1}\n')
    with (
        Memory(tmp_path / "target.db", embedder=HashEmbedder(), workers=0) as target,
        pytest.raises(InvalidInput, match="not an omoide export"),
    ):
        target.import_file(bad)


def test_an_existing_destination_is_not_overwritten(exported: Path, tmp_path: Path) -> None:
    with (
        Memory(tmp_path / "target.db", embedder=HashEmbedder(), workers=0) as target,
        pytest.raises(InvalidInput, match="already exists"),
    ):
        target.export(exported)


def test_importing_into_the_source_store_changes_nothing(tmp_path: Path) -> None:
    with Memory(tmp_path / "source.db", embedder=HashEmbedder(), workers=0) as source:
        fill(source)
        source.export(tmp_path / "out.jsonl")
        stats = source.store.admin.stats()
        report = source.import_file(tmp_path / "out.jsonl")
        assert report.total == 0 and source.store.admin.stats() == stats


@pytest.mark.parametrize("messages", [[1], [{"role": "user"}], "hello"])
def test_an_episode_whose_messages_are_not_messages_is_refused(
    exported: Path, tmp_path: Path, messages: object
) -> None:
    """Written as they were, every later read of the session's episodes failed."""
    records = [json.loads(line) for line in exported.read_text("utf-8").splitlines()]
    episode = next(r for r in records if r["kind"] == "episode")
    episode["messages"] = messages
    edited = tmp_path / "edited.jsonl"
    edited.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    with Memory(tmp_path / "target.db", embedder=HashEmbedder(), workers=0) as target:
        with pytest.raises(InvalidInput, match="episode field 'messages'"):
            target.import_file(edited)
        assert target.store.admin.stats()["memories"] == 0


@pytest.mark.parametrize(
    ("field", "value"), [("value", {"deep": [1]}), ("value", None), ("type", "list"), ("name", 3)]
)
def test_a_variable_a_read_cannot_return_is_refused(
    exported: Path, tmp_path: Path, field: str, value: object
) -> None:
    """Written as it was, every later read of the tenant's variables failed."""
    records = [json.loads(line) for line in exported.read_text("utf-8").splitlines()]
    variable = next(r for r in records if r["kind"] == "variable")
    variable[field] = value
    edited = tmp_path / "edited.jsonl"
    edited.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    with Memory(tmp_path / "target.db", embedder=HashEmbedder(), workers=0) as target:
        with pytest.raises(InvalidInput, match=f"variable field '{field}'"):
            target.import_file(edited)
        assert target.get_variables(None, user_id=ALICE.user_id, scope_id=ALICE.scope_id) == {}


@pytest.mark.parametrize("field", ["created_at", "valid_from"])
def test_a_time_past_year_9999_is_refused(exported: Path, tmp_path: Path, field: str) -> None:
    """An in-range SQLite integer, but no datetime: written as it was, every later listing
    and search of the tenant failed ("year 146140482 is out of range")."""
    records = [json.loads(line) for line in exported.read_text("utf-8").splitlines()]
    memory = next(r for r in records if r["kind"] == "memory")
    memory[field] = 2**62
    edited = tmp_path / "edited.jsonl"
    edited.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    with Memory(tmp_path / "target.db", embedder=HashEmbedder(), workers=0) as target:
        with pytest.raises(InvalidInput, match=f"memory field '{field}'.*years 1 to 9999"):
            target.import_file(edited)
        assert target.get_all(user_id=ALICE.user_id, scope_id=ALICE.scope_id).items == []


@pytest.mark.parametrize(
    ("field", "value"), [("event", "RENAME"), ("created_at", "today"), ("created_at", 2**62)]
)
def test_a_history_entry_a_read_cannot_return_is_refused(
    exported: Path, tmp_path: Path, field: str, value: object
) -> None:
    """Written as it was, the memory's history failed to read (a 500 over HTTP)."""
    records = [json.loads(line) for line in exported.read_text("utf-8").splitlines()]
    history = next(r for r in records if r["kind"] == "history")
    history["entries"][0][field] = value
    edited = tmp_path / "edited.jsonl"
    edited.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    with Memory(tmp_path / "target.db", embedder=HashEmbedder(), workers=0) as target:
        with pytest.raises(InvalidInput, match=f"history field 'entries' entry 0: {field}"):
            target.import_file(edited)
        assert target.store.admin.stats()["memories"] == 0
