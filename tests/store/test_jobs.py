"""Contract of ``JobQueue`` / ``JobWrites``: the durable queue, leases, retries, job steps."""

from __future__ import annotations

import time

import pytest

from omoide.errors import Conflict, NotFound
from omoide.store.ports.jobs import JobQueue, JobWrites
from omoide.store.protocol import Store
from omoide.types import JobState, now_ms
from tests.store.contract import ALICE, ALICE_OTHER, BOB, covers, enqueue


@covers(JobWrites.enqueue_job, JobQueue.get_job)
def test_enqueued_job_is_pending_with_its_payload(store: Store) -> None:
    with store.transaction() as tx:
        job_id = tx.jobs.enqueue_job(ALICE, "extract", {"ids": ["a"], "n": 1}, max_attempts=3)
    job = store.jobs.get_job(job_id)
    assert (job.kind, job.state, job.payload) == (
        "extract",
        JobState.PENDING,
        {"ids": ["a"], "n": 1},
    )
    assert (job.user_id, job.scope_id, job.attempts, job.max_attempts) == ("alice", "demo", 0, 3)
    assert job.last_error is None and job.result is None
    with pytest.raises(NotFound):
        store.jobs.get_job(job_id + 1000)


@covers(JobQueue.claim_jobs, JobQueue.fail_job, JobQueue.retry_job, JobQueue.job_counts)
def test_jobs_claim_fail_retry(store: Store) -> None:
    with store.transaction() as tx:
        job_id = tx.jobs.enqueue_job(ALICE, "embed", {"memory_ids": []}, max_attempts=2)
    [job] = store.jobs.claim_jobs(10, 60_000)
    assert (job.id, job.state, job.attempts) == (job_id, JobState.RUNNING, 1)
    assert store.jobs.claim_jobs(10, 60_000) == []  # leased
    assert store.jobs.fail_job(job_id, "boom", 0) == JobState.PENDING
    [job] = store.jobs.claim_jobs(10, 60_000)
    assert store.jobs.fail_job(job_id, "boom again", 0) == JobState.FAILED
    assert store.jobs.get_job(job_id).last_error == "boom again"
    assert store.jobs.job_counts(ALICE)["failed"] == 1 and store.jobs.job_counts(BOB)["failed"] == 0
    with pytest.raises(NotFound):
        store.jobs.retry_job(BOB, job_id)
    assert store.jobs.retry_job(ALICE, job_id).state == JobState.PENDING


@covers(JobQueue.claim_jobs)
def test_expired_lease_is_claimed_again(store: Store) -> None:
    with store.transaction() as tx:
        tx.jobs.enqueue_job(ALICE, "embed", {})
    assert len(store.jobs.claim_jobs(10, -1)) == 1  # lease already expired: a dead worker
    [again] = store.jobs.claim_jobs(10, 60_000)
    assert again.attempts == 2


@covers(JobQueue.claim_jobs)
def test_claim_takes_the_oldest_due_jobs_up_to_the_limit(store: Store) -> None:
    ids = [enqueue(store, scope) for scope in (ALICE, BOB, ALICE, ALICE_OTHER)]
    first = store.jobs.claim_jobs(3, 60_000)
    assert [j.id for j in first] == ids[:3]
    assert all(j.state is JobState.RUNNING for j in first)
    assert [j.id for j in store.jobs.claim_jobs(3, 60_000)] == ids[3:]
    assert store.jobs.claim_jobs(3, 60_000) == []


@covers(JobQueue.fail_job, JobQueue.claim_jobs)
def test_failed_attempt_waits_out_its_backoff(store: Store) -> None:
    job_id = enqueue(store, ALICE)
    store.jobs.claim_jobs(1, 60_000)
    assert store.jobs.fail_job(job_id, "later", 3_600_000) == JobState.PENDING
    assert store.jobs.claim_jobs(1, 60_000) == []  # not due for an hour
    assert store.jobs.get_job(job_id).state is JobState.PENDING
    with pytest.raises(NotFound):
        store.jobs.fail_job(job_id + 1000, "no such job", 0)


@covers(JobQueue.retry_job)
def test_only_failed_jobs_retry_and_retry_restarts_the_attempts(store: Store) -> None:
    with store.transaction() as tx:
        job_id = tx.jobs.enqueue_job(ALICE, "embed", {}, max_attempts=1)
    with pytest.raises(Conflict):
        store.jobs.retry_job(ALICE, job_id)  # pending
    store.jobs.claim_jobs(1, 60_000)
    assert store.jobs.fail_job(job_id, "boom", 0) == JobState.FAILED
    retried = store.jobs.retry_job(None, job_id)  # None: an operator, any tenant
    assert (retried.state, retried.attempts) == (JobState.PENDING, 0)
    assert [j.id for j in store.jobs.claim_jobs(1, 60_000)] == [job_id]
    with pytest.raises(NotFound):
        store.jobs.retry_job(None, job_id + 1000)


@covers(JobQueue.list_jobs)
def test_list_jobs_newest_first_filtered_by_tenant_and_state(store: Store) -> None:
    ids = [enqueue(store, scope) for scope in (ALICE, BOB, ALICE, ALICE)]
    [claimed] = store.jobs.claim_jobs(1, 60_000)
    assert [j.id for j in store.jobs.list_jobs(ALICE, None, 10, 0)] == [ids[3], ids[2], ids[0]]
    assert [j.id for j in store.jobs.list_jobs(ALICE, None, 1, 1)] == [ids[2]]
    assert [j.id for j in store.jobs.list_jobs(None, JobState.RUNNING, 10, 0)] == [claimed.id]
    assert [j.id for j in store.jobs.list_jobs(BOB, JobState.PENDING, 10, 0)] == [ids[1]]
    assert store.jobs.list_jobs(ALICE_OTHER, None, 10, 0) == []


@covers(JobQueue.job_counts)
def test_job_counts_name_every_state(store: Store) -> None:
    assert store.jobs.job_counts(None) == {s.value: 0 for s in JobState}
    for scope in (ALICE, ALICE, BOB):
        enqueue(store, scope)
    [job] = store.jobs.claim_jobs(1, 60_000)
    with store.transaction() as tx:
        tx.jobs.finish_job(job.id)
    assert store.jobs.job_counts(ALICE) == {"pending": 1, "running": 0, "done": 1, "failed": 0}
    assert store.jobs.job_counts(None)["pending"] == 2
    assert sum(store.jobs.job_counts(ALICE_OTHER).values()) == 0


@covers(JobWrites.finish_job)
def test_finished_job_keeps_its_result_and_is_never_claimed(store: Store) -> None:
    job_id = enqueue(store, ALICE)
    store.jobs.claim_jobs(1, -1)  # even with its lease expired
    with store.transaction() as tx:
        tx.jobs.finish_job(job_id, {"stored": 3})
    job = store.jobs.get_job(job_id)
    assert (job.state, job.result) == (JobState.DONE, {"stored": 3})
    assert store.jobs.claim_jobs(10, 60_000) == []


@covers(JobWrites.fail_job_now)
def test_fail_job_now_fails_at_once_with_its_result(store: Store) -> None:
    job_id = enqueue(store, ALICE)  # 5 attempts allowed, one used
    store.jobs.claim_jobs(1, 60_000)
    with store.transaction() as tx:
        tx.jobs.fail_job_now(job_id, "cannot be fixed by retrying", {"steps": {}})
    job = store.jobs.get_job(job_id)
    assert (job.state, job.last_error, job.result) == (
        JobState.FAILED,
        "cannot be fixed by retrying",
        {"steps": {}},
    )
    assert store.jobs.claim_jobs(10, -1) == []


@covers(JobWrites.has_pending_job)
def test_has_pending_job_matches_kind_payload_tenant_and_pending_only(store: Store) -> None:
    job_id = enqueue(store, ALICE, "chunk", session_id="s1")
    with store.transaction() as tx:
        assert tx.jobs.has_pending_job(ALICE, "chunk", {"session_id": "s1"})
        assert not tx.jobs.has_pending_job(ALICE, "chunk", {"session_id": "s2"})
        assert not tx.jobs.has_pending_job(ALICE, "embed", {"session_id": "s1"})
        assert not tx.jobs.has_pending_job(BOB, "chunk", {"session_id": "s1"})
        assert not tx.jobs.has_pending_job(ALICE_OTHER, "chunk", {"session_id": "s1"})
        later = tx.jobs.enqueue_job(ALICE, "chunk", {"session_id": "s3"})
        assert tx.jobs.has_pending_job(ALICE, "chunk", {"session_id": "s3"})  # own write
    assert [j.id for j in store.jobs.claim_jobs(2, 60_000)] == [job_id, later]
    with store.transaction() as tx:
        assert not tx.jobs.has_pending_job(ALICE, "chunk", {"session_id": "s1"})  # running


@covers(JobWrites.claim_step, JobWrites.record_step, JobQueue.job_steps)
def test_a_recorded_step_is_never_claimed_again(store: Store) -> None:
    job_id = enqueue(store, ALICE, "extract")
    store.jobs.claim_jobs(1, 60_000)
    with store.transaction() as tx:
        assert tx.jobs.claim_step(job_id, "facts", 60_000)
        tx.jobs.record_step(job_id, "facts", {"status": "done", "detail": "2 facts", "calls": 1})
        assert not tx.jobs.claim_step(job_id, "facts", 60_000)  # own write
    with store.transaction() as tx:
        assert not tx.jobs.claim_step(job_id, "facts", 60_000)
        assert tx.jobs.claim_step(job_id, "profile", 60_000)
    assert store.jobs.job_steps(job_id)["facts"]["status"] == "done"


@covers(JobWrites.claim_step)
def test_claim_step_needs_a_running_job(store: Store) -> None:
    pending = enqueue(store, ALICE)
    with store.transaction() as tx:
        assert not tx.jobs.claim_step(pending, "facts", 60_000)
        assert not tx.jobs.claim_step(pending + 1000, "facts", 60_000)
    [job] = store.jobs.claim_jobs(1, 60_000)
    with store.transaction() as tx:
        tx.jobs.finish_job(job.id)
    with store.transaction() as tx:
        assert not tx.jobs.claim_step(job.id, "facts", 60_000)  # finished by a twin


@covers(JobWrites.claim_step)
def test_claim_step_renews_the_lease(store: Store) -> None:
    job_id = enqueue(store, ALICE)
    store.jobs.claim_jobs(1, -1)  # claimed with a lease that has run out
    with store.transaction() as tx:
        assert tx.jobs.claim_step(job_id, "a", 60_000)
    assert store.jobs.claim_jobs(1, 60_000) == []  # the step's renewal holds it
    with store.transaction() as tx:
        assert tx.jobs.claim_step(job_id, "b", -1)
    assert [j.id for j in store.jobs.claim_jobs(1, 60_000)] == [job_id]


@covers(JobQueue.job_steps, JobWrites.record_step)
def test_job_steps_keep_each_record_of_that_job(store: Store) -> None:
    job_id = enqueue(store, ALICE, "extract")
    other = enqueue(store, ALICE, "extract")
    store.jobs.claim_jobs(2, 60_000)
    assert store.jobs.job_steps(job_id) == {}
    with store.transaction() as tx:
        tx.jobs.record_step(
            job_id,
            "facts",
            {
                "status": "done",
                "detail": "d",
                "calls": 2,
                "prompt_tokens": 5,
                "completion_tokens": 7,
            },
        )
        tx.jobs.record_step(job_id, "profile", {"status": "skipped"})
        tx.jobs.record_step(other, "facts", {"status": "done"})
    steps = store.jobs.job_steps(job_id)
    assert sorted(steps) == ["facts", "profile"]  # the other job's record is not here
    assert steps["facts"] == {
        "status": "done",
        "detail": "d",
        "calls": 2,
        "prompt_tokens": 5,
        "completion_tokens": 7,
    }
    assert (steps["profile"]["status"], steps["profile"]["calls"]) == ("skipped", 0)


def _after(cutoff_ms: int) -> None:
    """Until the clock is past ``cutoff_ms``: what ends next ends after it."""
    while now_ms() <= cutoff_ms:
        time.sleep(0.001)


@covers(JobQueue.prune_finished_jobs)
def test_pruning_deletes_the_jobs_that_ended_before_the_cutoff_and_no_other(store: Store) -> None:
    done, failed, running, recent = (enqueue(store, scope) for scope in (ALICE, BOB, ALICE, BOB))
    store.jobs.claim_jobs(10, 60_000)
    pending = enqueue(store, ALICE)
    with store.transaction() as tx:
        tx.jobs.record_step(done, "facts", {"status": "done"})
        tx.jobs.finish_job(done, {"mode": "x"})
        tx.jobs.fail_job_now(failed, "boom")
    cutoff = now_ms() + 1
    _after(cutoff)
    with store.transaction() as tx:
        tx.jobs.finish_job(recent)
    assert store.jobs.prune_finished_jobs(cutoff, 1000) == 2  # both tenants' ended jobs
    for gone in (done, failed):
        with pytest.raises(NotFound):
            store.jobs.get_job(gone)
    assert store.jobs.job_steps(done) == {}
    assert store.jobs.get_job(running).state is JobState.RUNNING
    assert store.jobs.get_job(pending).state is JobState.PENDING
    assert store.jobs.get_job(recent).state is JobState.DONE
    assert store.jobs.prune_finished_jobs(cutoff, 1000) == 0


@covers(JobQueue.prune_finished_jobs)
def test_pruning_takes_the_oldest_jobs_first_up_to_its_limit(store: Store) -> None:
    ids = [enqueue(store, ALICE) for _ in range(3)]
    store.jobs.claim_jobs(10, 60_000)
    with store.transaction() as tx:
        for job_id in ids:
            tx.jobs.finish_job(job_id)
    cutoff = now_ms() + 1
    _after(cutoff)
    assert store.jobs.prune_finished_jobs(cutoff, 2) == 2
    assert [j.id for j in store.jobs.list_jobs(ALICE, None, 10, 0)] == [ids[2]]
