"""A finished job stays finished (issue 9, point 4).

The bug: a batch handler that raised made the worker fail every job of the batch, so a job that
had already finished went back to ``pending`` with another job's error, and ran again. The store
guards the state: failing, or recording a step of, a ``done`` job changes nothing, and
``fail_job`` answers with the state the job really has.
"""

from __future__ import annotations

import pytest

from omoide.errors import Conflict
from omoide.store.ports.jobs import JobQueue, JobWrites
from omoide.store.protocol import Store
from omoide.types import Job, JobState
from tests.store.contract import ALICE, covers, enqueue


def _finished(store: Store) -> Job:
    job_id = enqueue(store, ALICE, "extract")
    [job] = store.jobs.claim_jobs(1, 60_000)
    assert job.id == job_id
    with store.transaction() as tx:
        tx.jobs.finish_job(job_id, {"stored": 1})
    return store.jobs.get_job(job_id)


def _unchanged(store: Store, before: Job) -> None:
    after = store.jobs.get_job(before.id)
    assert (after.state, after.result, after.last_error) == (JobState.DONE, {"stored": 1}, None)
    assert after.attempts == before.attempts
    assert store.jobs.claim_jobs(10, 60_000) == []


@covers(JobQueue.fail_job)
def test_fail_job_on_a_done_job_leaves_it_done_and_says_so(store: Store) -> None:
    done = _finished(store)
    assert store.jobs.fail_job(done.id, "another job's error", 0) == JobState.DONE
    _unchanged(store, done)


@covers(JobWrites.fail_job_now)
def test_fail_job_now_on_a_done_job_leaves_it_done(store: Store) -> None:
    done = _finished(store)
    with store.transaction() as tx:
        tx.jobs.fail_job_now(done.id, "another job's error", {"steps": {}})
    _unchanged(store, done)


@covers(JobWrites.record_step)
def test_record_step_on_a_done_job_leaves_it_done(store: Store) -> None:
    done = _finished(store)
    with store.transaction() as tx:
        tx.jobs.record_step(done.id, "facts", {"status": "done"})
        assert not tx.jobs.claim_step(done.id, "profile", 60_000)
    _unchanged(store, done)
    assert store.jobs.job_steps(done.id) == {}


@covers(JobQueue.fail_job, JobWrites.finish_job)
def test_a_failing_batch_does_not_reopen_the_job_that_finished(store: Store) -> None:
    """The worker's batch path at store level: one job of two finished, then the handler
    raised and the worker failed the whole batch."""
    first, second = enqueue(store, ALICE), enqueue(store, ALICE)
    batch = store.jobs.claim_jobs(2, 60_000)
    assert [j.id for j in batch] == [first, second]
    with store.transaction() as tx:
        tx.jobs.finish_job(first, {"stored": 1})
    states = [store.jobs.fail_job(job.id, "handler raised", 0) for job in batch]
    assert states == [JobState.DONE, JobState.PENDING]
    assert store.jobs.get_job(first).last_error is None
    assert [j.id for j in store.jobs.claim_jobs(10, 60_000)] == [second]


@covers(JobWrites.finish_job)
def test_a_duplicate_finish_report_changes_nothing(store: Store) -> None:
    done = _finished(store)
    with store.transaction() as tx:
        tx.jobs.finish_job(done.id, {"stored": 99})  # a twin whose lease had expired
    _unchanged(store, done)


@covers(JobQueue.fail_job, JobWrites.fail_job_now)
def test_a_failed_job_keeps_its_own_error_against_late_reports(store: Store) -> None:
    job_id = enqueue(store, ALICE, "extract")
    store.jobs.claim_jobs(1, 60_000)
    with store.transaction() as tx:
        tx.jobs.fail_job_now(job_id, "its own error", None)
    assert store.jobs.fail_job(job_id, "another job's error", 0) == JobState.FAILED
    with store.transaction() as tx:
        tx.jobs.finish_job(job_id, {"late": True})
    job = store.jobs.get_job(job_id)
    assert (job.state, job.last_error, job.result) == (JobState.FAILED, "its own error", None)
    assert store.jobs.claim_jobs(10, 60_000) == []


@covers(JobWrites.record_step)
def test_a_step_is_recorded_once(store: Store) -> None:
    job_id = enqueue(store, ALICE, "extract")
    store.jobs.claim_jobs(1, 60_000)
    with store.transaction() as tx:
        tx.jobs.record_step(job_id, "facts", {"status": "done", "detail": "first"})
    with pytest.raises(Conflict), store.transaction() as tx:
        tx.jobs.record_step(job_id, "facts", {"status": "done", "detail": "second"})
    assert store.jobs.job_steps(job_id)["facts"]["detail"] == "first"
