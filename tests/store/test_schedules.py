"""Contract of ``ScheduleReads`` / ``ScheduleWrites`` (dreaming schedules, scope configs), on
both backends."""

from __future__ import annotations

import threading
from functools import partial

from omoide.store.ports.schedules import Schedule, ScheduleReads, ScheduleWrites
from omoide.store.protocol import Store
from tests.store.contract import ALICE, ALICE_OTHER, BOB, Backend, covers
from tests.store.test_concurrency import WAIT_S, race


def _schedule(scope: object = ALICE, **fields: object) -> Schedule:
    values: dict[str, object] = {
        "scope": scope,
        "enabled": True,
        "interval_ms": 1_000,
        "next_run_ms": 5_000,
        "settings": {"min_session_rounds": 4},
    }
    return Schedule(**(values | fields))  # type: ignore[arg-type]


@covers(ScheduleWrites.put_schedule, ScheduleReads.get_schedule, ScheduleReads.list_schedules)
def test_put_schedule_creates_then_replaces_keeping_its_run_history(store: Store) -> None:
    assert store.schedules.get_schedule(ALICE) is None
    with store.transaction() as tx:
        tx.schedules.put_schedule(_schedule(), 1)
        tx.schedules.put_schedule(_schedule(BOB, enabled=False), 1)
    with store.transaction() as tx:
        assert len(tx.schedules.claim_due(5_000, 10)) == 1
        tx.schedules.set_last_job(ALICE, 42)
    with store.transaction() as tx:
        tx.schedules.put_schedule(_schedule(interval_ms=9, next_run_ms=7, settings={"x": 1}), 2)
    got = store.schedules.get_schedule(ALICE)
    assert got == Schedule(ALICE, True, 9, 7, {"x": 1}, last_run_ms=5_000, last_job_id=42, sweeps=1)
    assert [s.scope for s in store.schedules.list_schedules(None, None)] == [ALICE, BOB]
    assert [s.scope for s in store.schedules.list_schedules("bob", None)] == [BOB]
    assert store.schedules.list_schedules("alice", "other") == []
    assert store.schedules.get_schedule(ALICE_OTHER) is None


@covers(ScheduleWrites.claim_due, ScheduleReads.next_due, ScheduleWrites.set_last_job)
def test_claim_due_moves_the_next_run_and_claims_each_due_schedule_once(store: Store) -> None:
    assert store.schedules.next_due() is None
    with store.transaction() as tx:
        tx.schedules.put_schedule(_schedule(next_run_ms=5_000), 1)
        tx.schedules.put_schedule(_schedule(BOB, next_run_ms=9_000), 1)
        tx.schedules.put_schedule(_schedule(ALICE_OTHER, enabled=False, next_run_ms=1), 1)
    assert store.schedules.next_due() == 5_000
    with store.transaction() as tx:
        assert tx.schedules.claim_due(4_999, 10) == []
        [claimed] = tx.schedules.claim_due(6_000, 10)
        assert claimed.scope == ALICE and claimed.next_run_ms == 7_000
        assert (claimed.last_run_ms, claimed.sweeps) == (6_000, 1)
        assert tx.schedules.claim_due(6_000, 10) == []  # claimed: not due again until 7_000
        tx.schedules.set_last_job(BOB, 7)
    assert store.schedules.next_due() == 7_000
    with store.transaction() as tx:
        assert [s.scope for s in tx.schedules.claim_due(10_000, 1)] == [ALICE]  # earliest first
        rest = tx.schedules.claim_due(10_000, 5)
        assert [s.scope for s in rest] == [BOB]
    assert store.schedules.get_schedule(BOB).last_job_id == 7  # type: ignore[union-attr]


@covers(ScheduleWrites.claim_due)
def test_a_claim_moves_the_next_run_by_the_floor_when_the_interval_is_shorter(
    store: Store,
) -> None:
    with store.transaction() as tx:
        tx.schedules.put_schedule(_schedule(interval_ms=1), 1)
        tx.schedules.put_schedule(_schedule(BOB, interval_ms=90_000), 1)
    with store.transaction() as tx:
        claimed = tx.schedules.claim_due(5_000, 10, min_interval_ms=60_000)
    assert [(s.scope, s.next_run_ms) for s in claimed] == [(ALICE, 65_000), (BOB, 95_000)]
    assert store.schedules.get_schedule(ALICE).interval_ms == 1  # type: ignore[union-attr]


@covers(ScheduleWrites.claim_due)
def test_a_rolled_back_claim_leaves_the_schedule_due(store: Store) -> None:
    with store.transaction() as tx:
        tx.schedules.put_schedule(_schedule(), 1)
    try:
        with store.transaction() as tx:
            assert tx.schedules.claim_due(5_000, 10)
            raise RuntimeError("the enqueue failed")
    except RuntimeError:
        pass
    assert store.schedules.next_due() == 5_000


@covers(ScheduleWrites.claim_due)
def test_processes_claiming_at_once_claim_a_due_schedule_exactly_once(
    store: Store, backend: Backend
) -> None:
    with store.transaction() as tx:
        tx.schedules.put_schedule(_schedule(), 1)
    handles = [store, *(backend.open() for _ in range(3))]
    start = threading.Barrier(len(handles), timeout=WAIT_S)

    def claim(handle: Store) -> int:
        start.wait()
        with handle.transaction() as tx:
            return len(tx.schedules.claim_due(5_500, 10))

    outcomes = race([partial(claim, h) for h in handles])
    claimed = [o.value for o in outcomes if o.error is None]
    assert sum(claimed) == 1, [o.error for o in outcomes]
    assert store.schedules.get_schedule(ALICE).sweeps == 1  # type: ignore[union-attr]


@covers(ScheduleWrites.disable_schedules)
def test_disable_schedules_matches_user_and_scope(store: Store) -> None:
    with store.transaction() as tx:
        for scope in (ALICE, BOB, ALICE_OTHER):
            tx.schedules.put_schedule(_schedule(scope), 1)
    with store.transaction() as tx:
        assert tx.schedules.disable_schedules("alice", "other", 2) == 1
        assert tx.schedules.disable_schedules("alice", "other", 2) == 0
        assert tx.schedules.disable_schedules("alice", None, 2) == 1
        assert tx.schedules.claim_due(10_000, 10)[0].scope == BOB
        assert tx.schedules.disable_schedules(None, None, 2) == 1
    assert not any(s.enabled for s in store.schedules.list_schedules(None, None))
    assert store.schedules.next_due() is None


@covers(ScheduleWrites.set_scope_config, ScheduleReads.get_scope_config)
@covers(ScheduleWrites.delete_scope_config)
def test_scope_configs_are_per_tenant_json_objects(store: Store) -> None:
    config = {"user_profile_definition": "我住在深圳", "nested": {"n": [1, 2.5, None]}}
    with store.transaction() as tx:
        tx.schedules.set_scope_config(ALICE, {"old": True}, 1)
        tx.schedules.set_scope_config(ALICE, config, 2)
        tx.schedules.set_scope_config(BOB, {"bob": 1}, 1)
    assert store.schedules.get_scope_config(ALICE) == config
    assert store.schedules.get_scope_config(ALICE_OTHER) is None
    with store.transaction() as tx:
        assert tx.schedules.delete_scope_config(ALICE) is True
        assert tx.schedules.delete_scope_config(ALICE) is False
    assert store.schedules.get_scope_config(ALICE) is None
    assert store.schedules.get_scope_config(BOB) == {"bob": 1}


def test_deleting_a_tenant_deletes_its_schedule_and_config(store: Store) -> None:
    with store.transaction() as tx:
        tx.schedules.put_schedule(_schedule(), 1)
        tx.schedules.put_schedule(_schedule(BOB), 1)
        tx.schedules.set_scope_config(ALICE, {"a": 1}, 1)
    with store.transaction() as tx:
        tx.admin.delete_scope(ALICE)
    assert store.schedules.get_schedule(ALICE) is None
    assert store.schedules.get_scope_config(ALICE) is None
    assert store.schedules.get_schedule(BOB) is not None
