"""``Store.watch_jobs``: idle workers are woken when any process enqueues a job (PostgreSQL:
LISTEN/NOTIFY), or the backend says nothing and its workers poll (SQLite)."""

from __future__ import annotations

import threading

from omoide.store.protocol import Store
from tests.store.contract import ALICE, Backend, covers

# Backends that signal enqueued jobs across processes; the others return a no-op.
SIGNALLING = {"postgres"}


@covers(Store.watch_jobs)
def test_a_job_enqueued_through_another_handle_wakes_the_watcher(
    store: Store, backend: Backend
) -> None:
    woken = threading.Event()
    stop = store.watch_jobs(woken.set)
    try:
        other = backend.open()  # another process's connection to the same database
        with other.transaction() as tx:
            tx.jobs.enqueue_job(ALICE, "embed", {"memory_ids": ["m1"]})
        if backend.name in SIGNALLING:
            assert woken.wait(20), "no wake-up after a committed enqueue"
        else:
            assert not woken.is_set()  # nothing to tell: workers find the job by polling
    finally:
        stop()
    woken.clear()
    with store.transaction() as tx:  # after stop, no more wake-ups
        tx.jobs.enqueue_job(ALICE, "embed", {"memory_ids": ["m2"]})
    assert not woken.wait(0.5 if backend.name in SIGNALLING else 0)
    stop()  # stopping twice is harmless


@covers(Store.watch_jobs)
def test_a_rolled_back_enqueue_wakes_nobody(store: Store, backend: Backend) -> None:
    woken = threading.Event()
    stop = store.watch_jobs(woken.set)
    try:
        try:
            with store.transaction() as tx:
                tx.jobs.enqueue_job(ALICE, "embed", {"memory_ids": ["m1"]})
                raise RuntimeError("abort")
        except RuntimeError:
            pass
        assert not woken.wait(0.5 if backend.name in SIGNALLING else 0)
        assert store.jobs.list_jobs(None, None, 10, 0) == []
    finally:
        stop()
