"""One retry policy: backoff that grows and caps, and a visible give-up."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from omoide.errors import Conflict, EmbedderError, InvalidInput, LLMError, NotFound
from omoide.jobs.kinds import CHUNK, JobKind
from omoide.jobs.policy import RetryPolicy
from omoide.jobs.queue import enqueue
from omoide.jobs.worker import Registration, run_batch
from omoide.store import Store
from omoide.types import Job, JobState
from tests.jobs.conftest import SCOPE, EchoPayload, enqueue_echo, job, make_due


def test_backoff_doubles_from_the_base_and_stops_at_the_cap() -> None:
    policy = RetryPolicy()
    assert [policy.backoff_ms(n) for n in range(1, 6)] == [1_000, 2_000, 4_000, 8_000, 16_000]
    assert policy.backoff_ms(10) == 512_000
    assert policy.backoff_ms(11) == policy.backoff_ms(10_000) == 600_000  # capped, no overflow
    assert policy.backoff_ms(0) == 1_000
    small = RetryPolicy(base_backoff_ms=50, max_backoff_ms=300)
    assert [small.backoff_ms(n) for n in range(1, 6)] == [50, 100, 200, 300, 300]


def test_which_errors_are_worth_a_retry() -> None:
    policy = RetryPolicy()
    assert policy.decide(LLMError("timeout"), 1).retry
    assert not policy.decide(EmbedderError("other model", retryable=False), 1).retry
    assert policy.decide(Conflict("changed meanwhile"), 1).retry
    assert policy.decide(NotFound("not yet"), 1).retry
    assert policy.decide(RuntimeError("a bug, maybe fixed by a restart"), 2).delay_ms == 2_000
    assert not policy.decide(InvalidInput("unusable answer"), 1).retry
    # a chunk or consolidation job treats a deleted session as final (the handler skips it)
    assert not CHUNK.policy.decide(NotFound("session gone"), 1).retry
    assert CHUNK.policy.decide(Conflict("chunked meanwhile"), 1).retry


def failing(message: str) -> Registration[EchoPayload]:
    kind = JobKind(
        "echo", EchoPayload, RetryPolicy(3, base_backoff_ms=5_000, max_backoff_ms=12_000)
    )

    def handler(batch: Sequence[tuple[Job, EchoPayload]]) -> Mapping[int, BaseException]:
        return {row.id: LLMError(f"{message} (attempt {row.attempts})") for row, _ in batch}

    return Registration(kind, handler)


def test_each_failure_waits_longer_and_the_last_one_gives_up(store: Store) -> None:
    registration = failing("the LLM is down")
    with store.transaction() as tx:
        job_id = enqueue(tx.jobs, SCOPE, registration.kind, EchoPayload(text="x"))
    assert job(store, job_id).max_attempts == 3  # the kind's policy bounds the row
    waits = []
    for _ in range(2):
        assert run_batch(store, [registration]) == 1
        row = job(store, job_id)
        assert row.state is JobState.PENDING
        waits.append(round((row.run_after - row.updated_at).total_seconds() * 1000))
        assert run_batch(store, [registration]) == 0  # not due during its backoff
        make_due(store)
    assert waits == [5_000, 10_000]
    assert run_batch(store, [registration]) == 1
    given_up = job(store, job_id)
    assert given_up.state is JobState.FAILED and given_up.attempts == 3
    assert given_up.last_error == "LLMError: the LLM is down (attempt 3)"
    assert store.jobs.list_jobs(SCOPE, JobState.FAILED, 10, 0) == [given_up]
    assert store.jobs.job_counts(SCOPE)["failed"] == 1
    make_due(store)
    assert run_batch(store, [registration]) == 0  # a failed job is never claimed again


def test_the_backoff_stops_at_the_cap(store: Store) -> None:
    registration = failing("still down")
    kind = JobKind(
        "echo", EchoPayload, RetryPolicy(9, base_backoff_ms=5_000, max_backoff_ms=12_000)
    )
    [job_id] = enqueue_echo(store, "x", kind=kind)
    waits = []
    for _ in range(4):
        run_batch(store, [registration])
        row = job(store, job_id)
        waits.append(round((row.run_after - row.updated_at).total_seconds() * 1000))
        make_due(store)
    assert waits == [5_000, 10_000, 12_000, 12_000]
