"""The job queue across processes: ``FOR UPDATE SKIP LOCKED`` claims, leases that expire."""

from __future__ import annotations

import threading

import psycopg

from omoide.store.postgres import PostgresStore
from omoide.types import JobState
from tests.store.contract import ALICE, BOB, enqueue

WAIT_S = 60


def test_workers_on_separate_handles_claim_disjoint_jobs(pg_url: str) -> None:
    """Four handles (four worker processes, as far as the database can tell) drain one
    queue together: every job is claimed by exactly one of them."""
    handles = [PostgresStore(pg_url, max_connections=2) for _ in range(4)]
    try:
        queued = {enqueue(handles[0], (ALICE, BOB)[n % 2], n=n) for n in range(60)}
        start = threading.Barrier(len(handles), timeout=WAIT_S)
        claimed: list[list[int]] = [[] for _ in handles]

        def drain(store: PostgresStore, into: list[int]) -> None:
            start.wait()
            while batch := store.jobs.claim_jobs(3, 60_000):
                into.extend(job.id for job in batch)
                with store.transaction() as tx:
                    for job in batch:
                        tx.jobs.finish_job(job.id)

        threads = [
            threading.Thread(target=drain, args=pair) for pair in zip(handles, claimed, strict=True)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(WAIT_S)
        every = [job_id for part in claimed for job_id in part]
        assert sorted(every) == sorted(queued)  # none lost, none twice
        assert handles[0].jobs.job_counts(None)["done"] == len(queued)
    finally:
        for store in handles:
            store.close()


def test_a_running_job_whose_lease_expired_is_claimed_again(pg_store: PostgresStore) -> None:
    job_id = enqueue(pg_store, ALICE)
    [first] = pg_store.jobs.claim_jobs(1, -1_000)  # a worker that died: its lease is over
    assert pg_store.jobs.claim_jobs(1, 60_000)[0].id == job_id == first.id
    job = pg_store.jobs.get_job(job_id)
    assert (job.state, job.attempts) == (JobState.RUNNING, 2)
    assert pg_store.jobs.claim_jobs(1, 60_000) == []  # a live lease is never taken


def test_a_claim_skips_rows_another_transaction_has_locked(pg_url: str) -> None:
    """A claim never waits on a row another worker is claiming: it takes the next one."""
    store = PostgresStore(pg_url)
    try:
        first, second = enqueue(store, ALICE), enqueue(store, ALICE)
        with psycopg.connect(pg_url) as holder, holder.transaction():
            # another worker's transaction holding the first job's row
            holder.execute("SELECT 1 FROM jobs WHERE id = %s FOR UPDATE", (first,))
            assert [j.id for j in store.jobs.claim_jobs(2, 60_000)] == [second]
        assert [j.id for j in store.jobs.claim_jobs(2, 60_000)] == [first]
    finally:
        store.close()
