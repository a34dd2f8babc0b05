"""A real store per test (SQLite; PostgreSQL in the PostgreSQL pass), and helpers to enqueue
raw rows and make waiting jobs due."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from omoide import store as seam
from omoide.jobs.kinds import JobKind, Payload
from omoide.jobs.policy import RetryPolicy
from omoide.jobs.queue import enqueue
from omoide.store import Store
from omoide.types import Job, Scope
from tests import sql

SCOPE = Scope(user_id="u", scope_id="s")


class EchoPayload(Payload):
    """A test-only kind: the worker must run kinds it was given, not only omoide's own."""

    text: str


ECHO = JobKind("echo", EchoPayload, RetryPolicy(max_attempts=3))


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "j.db"


@pytest.fixture
def store(db_path: Path) -> Iterator[Store]:
    store = seam.open_store(db_path)
    yield store
    store.close()


def enqueue_echo(store: Store, *texts: str, kind: JobKind[EchoPayload] = ECHO) -> list[int]:
    with store.transaction() as tx:
        return [enqueue(tx.jobs, SCOPE, kind, EchoPayload(text=t)) for t in texts]


def enqueue_raw(store: Store, kind: str, payload: dict[str, Any], max_attempts: int = 5) -> int:
    """A row as older code (or a corrupted database) left it: no model in between."""
    with store.transaction() as tx:
        return tx.jobs.enqueue_job(SCOPE, kind, payload, max_attempts)


def make_due(store: Store) -> None:
    """Skip the backoff wait of every pending job (tests do not sleep through it)."""
    sql.execute(store, "UPDATE jobs SET run_after = 0 WHERE state = 'pending'")


def job(store: Store, job_id: int) -> Job:
    return store.jobs.get_job(job_id)
