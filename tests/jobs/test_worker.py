"""The worker against a real SQLite store: each job's outcome is its own."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence

from omoide.errors import InvalidInput, LLMError
from omoide.jobs.errors import JobFailed
from omoide.jobs.kinds import CHUNK, ChunkPayload
from omoide.jobs.worker import Registration, Worker, run_batch
from omoide.store import Store
from omoide.types import Job, JobState
from tests.jobs.conftest import ECHO, EchoPayload, enqueue_echo, enqueue_raw, job

Batch = Sequence[tuple[Job, EchoPayload]]


def finish(store: Store, job_id: int) -> None:
    with store.transaction() as tx:
        tx.jobs.finish_job(job_id, {"ok": True})


def test_a_handler_that_raises_after_finishing_a_job_leaves_that_job_done(store: Store) -> None:
    """The batch bug: one job's error used to send an already finished job back to pending."""
    first, second = enqueue_echo(store, "one", "two")

    def handler(batch: Batch) -> Mapping[int, BaseException]:
        finish(store, batch[0][0].id)
        raise RuntimeError(f"broke on job {batch[1][0].id}")

    assert run_batch(store, [Registration(ECHO, handler)]) == 2
    done, failed = job(store, first), job(store, second)
    assert done.state is JobState.DONE and done.last_error is None
    assert done.result == {"ok": True}
    assert failed.state is JobState.PENDING  # retried later: an unexpected error may pass
    assert failed.last_error is not None and f"broke on job {second}" in failed.last_error


def test_reported_errors_change_only_their_own_job(store: Store) -> None:
    ok, flaky, refused = enqueue_echo(store, "ok", "flaky", "refused")

    def handler(batch: Batch) -> Mapping[int, BaseException]:
        finish(store, ok)
        return {
            flaky: LLMError("the LLM answered 503", retryable=True),
            refused: InvalidInput("the answer stays unusable"),
        }

    run_batch(store, [Registration(ECHO, handler)])
    assert job(store, ok).state is JobState.DONE and job(store, ok).last_error is None
    retried = job(store, flaky)
    assert retried.state is JobState.PENDING
    assert retried.last_error == "LLMError: the LLM answered 503"
    given_up = job(store, refused)  # retrying cannot fix it: failed at the first attempt
    assert given_up.state is JobState.FAILED and given_up.attempts == 1
    assert given_up.last_error == "InvalidInput: the answer stays unusable"


def test_a_failure_can_keep_a_partial_result(store: Store) -> None:
    [job_id] = enqueue_echo(store, "partial")
    steps = {"steps": {"semantic": {"status": "done"}}}

    def handler(batch: Batch) -> Mapping[int, BaseException]:
        return {job_id: JobFailed(InvalidInput("bad variables answer", step="variables"), steps)}

    run_batch(store, [Registration(ECHO, handler)])
    failed = job(store, job_id)
    assert failed.state is JobState.FAILED
    assert failed.last_error == "step variables: InvalidInput: bad variables answer"
    assert failed.result == steps


def test_an_unreadable_payload_fails_only_its_own_job(store: Store) -> None:
    good = enqueue_raw(store, "chunk", {"session_id": "s1"})
    missing = enqueue_raw(store, "chunk", {})
    null = enqueue_raw(store, "chunk", {"session_id": None})
    newer = enqueue_raw(store, "chunk", {"session_id": "s2", "v": 99})
    typo = enqueue_raw(store, "chunk", {"sesion_id": "s3"})
    seen: list[ChunkPayload] = []

    def handler(batch: Sequence[tuple[Job, ChunkPayload]]) -> Mapping[int, BaseException]:
        for row, payload in batch:
            seen.append(payload)
            finish(store, row.id)
        return {}

    assert run_batch(store, [Registration(CHUNK, handler)]) == 5
    assert seen == [ChunkPayload(session_id="s1")]  # never a session called "None"
    assert job(store, good).state is JobState.DONE
    expected = {
        missing: "session_id: Field required",
        null: "session_id: Input should be a valid string",
        newer: "payload version 99; this code reads up to version 1",
        typo: "sesion_id: Extra inputs are not permitted",
    }
    for job_id, reason in expected.items():
        failed = job(store, job_id)
        assert failed.state is JobState.FAILED and failed.attempts == 1  # no retry
        assert failed.last_error is not None
        assert failed.last_error.startswith(f"InvalidJobPayload: job {job_id} (chunk) ")
        assert reason in failed.last_error


def test_a_job_of_an_unknown_kind_waits_visibly_and_the_others_run(store: Store) -> None:
    stranger = enqueue_raw(store, "teleport", {"to": "mars"})  # a newer version's kind
    unhandled = enqueue_raw(store, "embed", {"memory_ids": ["m1"]})
    [echo] = enqueue_echo(store, "still runs")

    def handler(batch: Batch) -> Mapping[int, BaseException]:
        finish(store, batch[0][0].id)
        return {}

    assert run_batch(store, [Registration(ECHO, handler)]) == 3
    assert job(store, echo).state is JobState.DONE
    # Neither is lost: a worker that has the handler (a newer version, another process) may
    # run it; the reason is on the row, and the attempts run out as for any failure.
    for job_id, kind in ((stranger, "teleport"), (unhandled, "embed")):
        waiting = job(store, job_id)
        assert waiting.state is JobState.PENDING and waiting.attempts == 1
        assert waiting.last_error is not None
        assert f"no handler for job kind {kind!r}" in waiting.last_error
    assert store.jobs.list_jobs(None, JobState.FAILED, 10, 0) == []


def test_errors_for_jobs_outside_the_batch_are_ignored(store: Store) -> None:
    [mine] = enqueue_echo(store, "mine")
    [other] = enqueue_echo(store, "not claimed yet")

    def handler(batch: Batch) -> Mapping[int, BaseException]:
        finish(store, mine)
        return {other: RuntimeError("not yours")}

    assert run_batch(store, [Registration(ECHO, handler)], limit=1) == 1
    assert job(store, mine).state is JobState.DONE
    untouched = job(store, other)
    assert untouched.state is JobState.PENDING and untouched.last_error is None
    assert untouched.attempts == 0


def test_the_transitional_handler_dict_keeps_finished_jobs_done(store: Store) -> None:
    first, second = enqueue_echo(store, "one", "two")

    def legacy(jobs: list[Job]) -> None:
        finish(store, jobs[0].id)
        raise InvalidInput("old handlers raise for the whole batch")

    run_batch(store, {"echo": legacy})
    assert job(store, first).state is JobState.DONE
    retried = job(store, second)  # as before: whatever a legacy handler raises is retried
    assert retried.state is JobState.PENDING
    assert retried.last_error == "InvalidInput: old handlers raise for the whole batch"


def test_the_worker_thread_runs_jobs_until_stopped(store: Store) -> None:
    ran = threading.Event()

    def handler(batch: Batch) -> Mapping[int, BaseException]:
        for row, _ in batch:
            finish(store, row.id)
        ran.set()
        return {}

    before = set(threading.enumerate())
    worker = Worker(store, [Registration(ECHO, handler)], idle_s=30.0)
    # no new thread (others, like a background build of the word table, may end meanwhile)
    assert not set(threading.enumerate()) - before  # constructing a worker starts no thread
    [job_id] = enqueue_echo(store, "background")
    worker.start()
    try:
        worker.wake()
        assert ran.wait(30.0)
    finally:
        worker.stop()
    assert not set(threading.enumerate()) - before
    assert job(store, job_id).state is JobState.DONE
