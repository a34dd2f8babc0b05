"""Contract of ``AdminReads.export_records`` / ``AdminWrites.import_records``: the records
``omoide export`` writes, read from one snapshot, and written back as they were."""

from __future__ import annotations

from typing import Any

import pytest

from omoide.errors import Conflict, InvalidInput, NotFound
from omoide.store.ports.admin import AdminReads, AdminWrites
from omoide.store.ports.schedules import Schedule
from omoide.store.ports.transfer import RECORD_FIELDS, RECORD_KINDS
from omoide.store.protocol import Store
from omoide.types import SearchFilters
from tests.store.contract import (
    ALICE,
    BOB,
    add,
    covers,
    enqueue,
    session_with_episodes,
    unit,
)

Records = list[tuple[str, dict[str, Any]]]


def _all(store: Store, user: str | None = None, scope: str | None = None) -> Records:
    return [
        (kind, record)
        for kind, batch in store.admin.export_records(user, scope, 2)
        for record in batch
    ]


def _seed(store: Store) -> None:
    [episode] = session_with_episodes(store, ALICE, "chat", ["I like tea", "and cake"])
    memory_id = add(store, ALICE, "likes tea", session_id="chat", source_episodes=[episode])
    add(store, BOB, "bob's note")
    with store.transaction() as tx:
        tx.memories.put_vector(ALICE, memory_id, unit(1, 2, 3))
        tx.memories.update_memory(ALICE, memory_id, None, {"k": "v"}, "test")
        tea = tx.graph.upsert_entity(ALICE, "tea", "drink", 1_000, episode)
        me = tx.graph.upsert_entity(ALICE, "Alice", "person", 1_001, episode)
        tx.graph.upsert_relationship(ALICE, me.id, tea.id, "likes", None, 1_002)
        tx.variables.set_variables(ALICE, {"mood": ("calm", "string")}, 1_003)
        tx.variables.add_usage(ALICE, 3, 4, 1, 1_004)
        tx.sessions.upsert_project(ALICE, "p", "a project", False)
        settings = {"min_session_rounds": 2, "deep": {"z": [1], "a": None}}
        tx.schedules.put_schedule(Schedule(ALICE, True, 1_000, 2_000, settings), 1_005)
        tx.schedules.put_schedule(Schedule(BOB, False, 9_000, 9_000), 1_006)
        tx.schedules.claim_due(2_500, 10)  # alice's has run once
        tx.schedules.set_scope_config(ALICE, {"z": "last", "a": {"c": 1, "b": 2}}, 1_007)
    enqueue(store, BOB, "embed", memory_ids=["x"])


@covers(AdminReads.export_records, AdminWrites.import_records)
def test_records_go_back_as_they_were(store: Store) -> None:
    _seed(store)
    before = _all(store)
    assert {kind for kind, _ in before} >= {"session", "episode", "memory", "history", "entity"}
    assert {kind for kind, _ in before} >= {"schedule", "scope_config"}
    order = [RECORD_KINDS.index(kind) for kind, _ in before]
    assert order == sorted(order)
    for kind, record in before:
        assert set(record) == set(RECORD_FIELDS[kind]), kind
    with store.transaction() as tx:
        tx.admin.delete_everything()
    assert _all(store) == []
    for kind, record in before:
        with store.transaction() as tx:
            assert tx.admin.import_records(kind, [record]) == [0]
    assert _all(store) == before
    schedule = store.schedules.get_schedule(ALICE)
    assert schedule is not None and (schedule.sweeps, schedule.last_run_ms) == (1, 2_500)
    assert store.schedules.get_scope_config(ALICE) == {"z": "last", "a": {"c": 1, "b": 2}}
    hits = store.memories.vector_search(ALICE, unit(1, 2, 3), SearchFilters(), 5)
    assert [memory_id for memory_id, _ in hits] == [r["id"] for k, r in before if k == "memory"][:1]


@covers(AdminWrites.import_records)
def test_records_the_store_holds_are_skipped(store: Store) -> None:
    _seed(store)
    before = _all(store)
    for kind in RECORD_KINDS:
        records = [record for k, record in before if k == kind]
        with store.transaction() as tx:
            assert tx.admin.import_records(kind, records) == [], kind
    assert _all(store) == before


@covers(AdminReads.export_records)
def test_one_tenant_and_one_snapshot(store: Store) -> None:
    _seed(store)
    alice = _all(store, "alice", "demo")
    assert alice and {(r["user_id"], r["scope_id"]) for _, r in alice} == {("alice", "demo")}
    assert _all(store, "alice", "elsewhere") == []
    stream = store.admin.export_records(None, None, 1)
    _, first = next(stream)
    assert len(first) == 1
    add(store, ALICE, "written after the export began")
    seen = [r.get("text") for kind, batch in stream for r in batch if kind == "memory"]
    assert "written after the export began" not in seen and seen


@covers(AdminWrites.import_records)
def test_bad_records_are_refused(store: Store) -> None:
    _seed(store)
    memory = next(r for k, r in _all(store, "alice") if k == "memory")
    with store.transaction() as tx, pytest.raises(InvalidInput):
        tx.admin.import_records("nonsense", [memory])
    with store.transaction() as tx, pytest.raises(InvalidInput):
        tx.admin.import_records("memory", [{**memory, "extra": 1}])
    with store.transaction() as tx, pytest.raises(Conflict):
        tx.admin.import_records("memory", [{**memory, "user_id": "bob"}])
    orphan = {**memory, "id": "new-id", "session": "no-such-session"}
    with store.transaction() as tx, pytest.raises(NotFound):
        tx.admin.import_records("memory", [orphan])


@covers(AdminWrites.import_records)
def test_a_vector_may_be_given_as_a_list(store: Store) -> None:
    _seed(store)
    memory = next(r for k, r in _all(store, "alice") if k == "memory" and r["vector"])
    with store.transaction() as tx:
        tx.admin.delete_everything()
    as_list = [float(v) for v in unit(1, 2, 3)]
    alone = {**memory, "session": None, "sources": [], "vector": as_list}  # no session needed
    with store.transaction() as tx:
        assert tx.admin.import_records("memory", [alone]) == [0]
    hits = store.memories.vector_search(ALICE, unit(1, 2, 3), SearchFilters(), 1)
    assert hits[0][0] == memory["id"] and hits[0][1] == pytest.approx(1.0, abs=1e-6)
