"""Contract of the queue operations an LLM outage and a long step use: ``defer_job`` (a run
that failed for a reason outside the job uses up no attempt), ``renew_lease``, and the result
kept by ``fail_job``; ``retry_job`` starts without the error it was given up with."""

from __future__ import annotations

from omoide.store.ports.jobs import JobQueue
from omoide.store.protocol import Store
from omoide.types import JobState
from tests.store.contract import ALICE, covers


@covers(JobQueue.defer_job)
def test_a_deferred_run_uses_up_no_attempt(store: Store) -> None:
    with store.transaction() as tx:
        job_id = tx.jobs.enqueue_job(ALICE, "extract", {}, max_attempts=1)
    for _ in range(3):
        [job] = store.jobs.claim_jobs(10, 60_000)
        assert store.jobs.defer_job(job.id, "LLM down", 0, {"steps": {"a": 1}}) is JobState.PENDING
    job = store.jobs.get_job(job_id)
    assert (job.attempts, job.max_attempts) == (3, 4)  # one attempt left, as enqueued
    assert job.last_error == "LLM down" and job.result == {"steps": {"a": 1}}
    store.jobs.claim_jobs(10, 60_000)
    assert store.jobs.fail_job(job_id, "bad answer", 0) is JobState.FAILED
    assert store.jobs.defer_job(job_id, "late", 0) is JobState.FAILED  # not running: unchanged


@covers(JobQueue.renew_lease)
def test_a_renewed_lease_keeps_the_job_from_being_claimed_again(store: Store) -> None:
    with store.transaction() as tx:
        job_id = tx.jobs.enqueue_job(ALICE, "extract", {})
    store.jobs.claim_jobs(10, -1)  # a lease that has run out: anyone may claim the job
    assert store.jobs.renew_lease(job_id, 60_000) is True
    assert store.jobs.claim_jobs(10, 60_000) == []
    with store.transaction() as tx:
        tx.jobs.finish_job(job_id)
    assert store.jobs.renew_lease(job_id, 60_000) is False


@covers(JobQueue.fail_job, JobQueue.retry_job)
def test_a_retried_job_keeps_its_result_but_not_its_old_error(store: Store) -> None:
    with store.transaction() as tx:
        job_id = tx.jobs.enqueue_job(ALICE, "extract", {}, max_attempts=1)
    store.jobs.claim_jobs(10, 60_000)
    assert store.jobs.fail_job(job_id, "boom", 0, {"steps": {"x": 1}}) is JobState.FAILED
    job = store.jobs.retry_job(ALICE, job_id)
    assert job.last_error is None and job.result == {"steps": {"x": 1}}


@covers(JobQueue.release_jobs)
def test_released_jobs_are_due_now_and_others_stay_as_they_are(store: Store) -> None:
    with store.transaction() as tx:
        waiting, running, other = (tx.jobs.enqueue_job(ALICE, "extract", {}) for _ in range(3))
    claimed = {job.id for job in store.jobs.claim_jobs(10, 60_000)}
    assert claimed == {waiting, running, other}
    store.jobs.defer_job(waiting, "LLM down", 3_600_000)
    store.jobs.defer_job(other, "LLM down", 3_600_000)
    assert store.jobs.claim_jobs(10, 60_000) == []  # both wait out an hour
    assert store.jobs.release_jobs([waiting, running, 999_999]) == 1  # not running, not unknown
    assert [job.id for job in store.jobs.claim_jobs(10, 60_000)] == [waiting]
    job = store.jobs.get_job(waiting)
    assert (job.attempts, job.last_error) == (2, "LLM down")
    assert store.jobs.get_job(running).state is JobState.RUNNING
    assert store.jobs.release_jobs([]) == 0
    assert store.jobs.get_job(other).state is JobState.PENDING  # not named: still waiting
