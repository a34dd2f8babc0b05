"""Concurrency contracts: what two writers racing on the same rows may and may not produce.

Each race runs real threads, either on one store or on two handles of the same database (two
processes, as far as the backend can tell), lined up by a barrier after their reads so both act
on the same stale view. Which one wins is up to the backend; the outcome is not.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import pytest

from omoide.errors import Conflict, NotFound
from omoide.store.ports.chunks import ChunkCursor, ChunkWrites, NewChunk
from omoide.store.ports.consolidation import ConsolidationWrites
from omoide.store.ports.jobs import JobQueue, JobWrites
from omoide.store.ports.memories import MemoryWrites
from omoide.store.protocol import NewMemory, Store
from omoide.types import HistoryEvent, Job, MemoryType, SearchFilters
from tests.store.contract import ALICE, Backend, add, covers, enqueue, session_with_episodes

WAIT_S = 30  # a generous bound on a condition, never a delay


@dataclass
class Outcome:
    value: Any = None
    error: BaseException | None = None


def race(calls: list[Callable[[], Any]]) -> list[Outcome]:
    """Run each call in its own thread and collect what each returned or raised."""
    outcomes = [Outcome() for _ in calls]

    def run(outcome: Outcome, call: Callable[[], Any]) -> None:
        try:
            outcome.value = call()
        except BaseException as exc:  # reported to the test, which asserts on it
            outcome.error = exc

    threads = [
        threading.Thread(target=run, args=pair) for pair in zip(outcomes, calls, strict=True)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT_S * 2)
    assert not any(t.is_alive() for t in threads), "a racer never finished"
    return outcomes


@pytest.fixture(params=["one store", "two handles"])
def handles(
    request: pytest.FixtureRequest, store: Store, backend: Backend
) -> Callable[[int], list[Store]]:
    """``handles(n)``: n stores on the test's database, shared or each its own."""

    def make(n: int) -> list[Store]:
        if request.param == "one store":
            return [store] * n
        return [store, *(backend.open() for _ in range(n - 1))]

    return make


def _winner(outcomes: list[Outcome]) -> tuple[Outcome, list[Outcome]]:
    won = [o for o in outcomes if o.error is None]
    lost = [o for o in outcomes if o.error is not None]
    assert len(won) == 1, [o.error for o in outcomes]
    return won[0], lost


def _chunk(store: Store, upto: int) -> NewChunk:
    last = store.chunks.session_messages(ALICE, "s1", None)[upto - 1]
    return NewChunk(
        memory=NewMemory(text=f"chunk to {last.content}", type=MemoryType.CHUNK, session_id="s1"),
        cursor=ChunkCursor(f"hash-{last.content}", last.created_ms, last.seq, last.index),
        messages=upto,
        tokens=upto,
    )


def _chunks(store: Store) -> list[str]:
    found = store.memories.list_memories(ALICE, SearchFilters(types=[MemoryType.CHUNK]), 10, 0)
    return [m.text for m in found[0]]


@covers(ChunkWrites.record_chunks)
def test_two_writers_recording_the_same_chunk_one_conflicts(
    store: Store, handles: Callable[[int], list[Store]]
) -> None:
    session_with_episodes(store, ALICE, "s1", ["m1", "m2"], ["m3"])
    both_planned = threading.Barrier(2, timeout=WAIT_S)

    def record(handle: Store) -> list[str]:
        planned = _chunk(handle, 2)
        both_planned.wait()
        with handle.transaction() as tx:
            return [i.id for i in tx.chunks.record_chunks(ALICE, "s1", [planned], "t")]

    _, [loser] = _winner(race([partial(record, h) for h in handles(2)]))
    assert isinstance(loser.error, Conflict)
    assert _chunks(store) == ["chunk to m2"]  # the loser's memory went with its transaction


@covers(ChunkWrites.chunk_state, ChunkWrites.record_chunks)
def test_a_writer_behind_an_advanced_cursor_sees_the_change(
    store: Store, handles: Callable[[int], list[Store]]
) -> None:
    """The chunking pass's optimistic re-check: both read the cursor, one records up to m2,
    the other (planned up to m3) must see the moved cursor inside its transaction."""
    session_with_episodes(store, ALICE, "s1", ["m1", "m2"], ["m3"])
    both_read = threading.Barrier(2, timeout=WAIT_S)
    seen: list[ChunkCursor | None] = []

    def chunk_pass(handle: Store, upto: int) -> ChunkCursor:
        read = handle.chunks.chunk_state(ALICE, "s1")[1]
        planned = _chunk(handle, upto)
        both_read.wait()
        with handle.transaction() as tx:
            now = tx.chunks.chunk_state(ALICE, "s1")[1]
            if now != read:
                seen.append(now)
                raise Conflict("chunked meanwhile")
            tx.chunks.record_chunks(ALICE, "s1", [planned], "t")
            return planned.cursor

    first, second = handles(2)
    won, _ = _winner(race([lambda: chunk_pass(first, 2), lambda: chunk_pass(second, 3)]))
    assert seen == [won.value]  # the loser saw exactly the winner's cursor
    assert store.chunks.chunk_state(ALICE, "s1") == (True, won.value)
    assert len(_chunks(store)) == 1


@covers(MemoryWrites.supersede_memory)
def test_two_writers_superseding_one_memory_leave_one_valid_version(
    store: Store, handles: Callable[[int], list[Store]]
) -> None:
    old = add(store, ALICE, "lives in Osaka")
    both_read = threading.Barrier(2, timeout=WAIT_S)

    def supersede(handle: Store, text: str) -> str:
        [current] = handle.memories.get_memories(ALICE, [old])
        assert current.invalid_at is None
        both_read.wait()
        with handle.transaction() as tx:
            return tx.memories.supersede_memory(
                ALICE, current.id, NewMemory(text=text), 5_000, "t"
            ).id

    first, second = handles(2)
    won, [lost] = _winner(
        race([lambda: supersede(first, "Kyoto"), lambda: supersede(second, "Nara")])
    )
    assert isinstance(lost.error, Conflict)
    valid = store.memories.list_memories(ALICE, SearchFilters(), 10, 0)[0]
    assert [m.id for m in valid] == [won.value]
    every = store.memories.list_memories(ALICE, SearchFilters(include_invalid=True), 10, 0)
    assert every[1] == 2  # the old version and the winner; nothing of the loser
    events = [e.event for e in store.memories.history(ALICE, old)]
    assert events == [HistoryEvent.ADD, HistoryEvent.UPDATE]


@covers(JobWrites.claim_step, JobWrites.record_step)
def test_two_claimers_of_one_step_exactly_one_runs_it(
    store: Store, handles: Callable[[int], list[Store]]
) -> None:
    job_id = enqueue(store, ALICE, "extract")
    store.jobs.claim_jobs(1, 60_000)
    ready = threading.Barrier(3, timeout=WAIT_S)

    def run_step(handle: Store) -> bool:
        ready.wait()
        with handle.transaction() as tx:
            claimed = tx.jobs.claim_step(job_id, "facts", 60_000)
            if claimed:
                tx.jobs.record_step(job_id, "facts", {"status": "done"})
            return claimed

    outcomes = race([partial(run_step, h) for h in handles(3)])
    assert [o.error for o in outcomes] == [None] * 3
    assert sorted(o.value for o in outcomes) == [False, False, True]
    assert list(store.jobs.job_steps(job_id)) == ["facts"]


@covers(JobWrites.claim_step, JobQueue.claim_jobs)
def test_an_unfinished_step_is_claimable_again_once_the_lease_expires(store: Store) -> None:
    job_id = enqueue(store, ALICE, "extract")
    store.jobs.claim_jobs(1, 60_000)  # worker A
    with store.transaction() as tx:
        assert tx.jobs.claim_step(job_id, "facts", 60_000)
        tx.jobs.record_step(job_id, "facts", {"status": "done"})
    assert store.jobs.claim_jobs(1, 60_000) == []  # A's lease holds: nobody else runs it
    with pytest.raises(RuntimeError), store.transaction() as tx:
        assert tx.jobs.claim_step(job_id, "profile", -1)  # A renews for no time, then dies
        raise RuntimeError("worker A crashed in the step")
    with store.transaction() as tx:
        tx.jobs.claim_step(job_id, "summary", -1)  # A's last renewal, already expired
    [again] = store.jobs.claim_jobs(1, 60_000)  # worker B
    assert (again.id, again.attempts) == (job_id, 2)
    with store.transaction() as tx:
        assert not tx.jobs.claim_step(job_id, "facts", 60_000)  # A recorded it
        assert tx.jobs.claim_step(job_id, "profile", 60_000)  # A's attempt left nothing


@covers(JobQueue.claim_jobs)
def test_claimers_never_get_the_same_job(
    store: Store, handles: Callable[[int], list[Store]]
) -> None:
    with store.transaction() as tx:
        ids = {tx.jobs.enqueue_job(ALICE, "embed", {"n": i}) for i in range(40)}
    start = threading.Barrier(4, timeout=WAIT_S)

    def drain(handle: Store) -> list[Job]:
        start.wait()
        got: list[Job] = []
        for _ in ids:  # bounded: a queue that hands jobs out twice must fail, not hang
            batch = handle.jobs.claim_jobs(3, 60_000)
            if not batch:
                break
            got += batch
        return got

    outcomes = race([partial(drain, h) for h in handles(4)])
    assert [o.error for o in outcomes] == [None] * 4
    claimed = [job.id for o in outcomes for job in o.value]
    assert len(claimed) == len(set(claimed)) == len(ids) and set(claimed) == ids
    assert all(job.attempts == 1 for o in outcomes for job in o.value)


@covers(JobQueue.claim_jobs)
def test_an_expired_job_goes_to_exactly_one_of_its_claimers(
    store: Store, handles: Callable[[int], list[Store]]
) -> None:
    job_id = enqueue(store, ALICE)
    store.jobs.claim_jobs(1, -1)  # its worker died
    start = threading.Barrier(3, timeout=WAIT_S)

    def claim(handle: Store) -> list[int]:
        start.wait()
        return [j.id for j in handle.jobs.claim_jobs(5, 60_000)]

    outcomes = race([partial(claim, h) for h in handles(3)])
    assert sorted(len(o.value) for o in outcomes) == [0, 0, 1]
    assert store.jobs.get_job(job_id).attempts == 2


@covers(ConsolidationWrites.apply_consolidation, ConsolidationWrites.consolidation_plan)
def test_two_writers_consolidating_the_same_episodes_one_conflicts(
    store: Store, handles: Callable[[int], list[Store]]
) -> None:
    episodes = session_with_episodes(store, ALICE, "s1", ["a"], ["b"])
    memory_id = add(store, ALICE, "a", session_id="s1", source_episodes=episodes[:1])
    both_planned = threading.Barrier(2, timeout=WAIT_S)

    def consolidate(handle: Store, consolidation_id: str) -> str:
        plan = handle.consolidation.consolidation_plan(ALICE, episodes)
        both_planned.wait()
        with handle.transaction() as tx:  # no re-check of the plan: the store must refuse
            tx.consolidation.apply_consolidation(
                ALICE, "s1", consolidation_id, plan, {"memories": plan.memories}, "t"
            )
        return consolidation_id

    first, second = handles(2)
    won, [lost] = _winner(
        race([partial(consolidate, first, "c-first"), partial(consolidate, second, "c-second")])
    )
    assert isinstance(lost.error, Conflict)
    loser_id = "c-second" if won.value == "c-first" else "c-first"
    with pytest.raises(NotFound), store.transaction() as tx:
        tx.consolidation.revert_consolidation(ALICE, loser_id, "t")  # never recorded
    with store.transaction() as tx:
        undone = tx.consolidation.revert_consolidation(ALICE, won.value, "t")
        assert undone["memories"] == [memory_id]
