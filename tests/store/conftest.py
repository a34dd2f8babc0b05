"""The backends the store contract runs on. A new backend adds one factory to ``BACKENDS``.

A factory gets the test's ``tmp_path`` and returns a ``Backend``: how to open a handle on a
fresh database for that test (each call is one more handle on the same data, as a second process
would open it: the concurrency contracts race two of them) and how to open a backup made by
``store.admin.backup``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from omoide.store import open_store
from omoide.store.protocol import Store


@dataclass(frozen=True)
class Backend:
    name: str
    open: Callable[[], Store]
    open_backup: Callable[[Path], Store]


def _sqlite(tmp_path: Path) -> Backend:
    path = tmp_path / "contract.db"
    return Backend("sqlite", lambda: open_store(path), open_store)


def _postgres(tmp_path: Path) -> Backend:
    """A fresh schema on the run's PostgreSQL server (skips when it cannot start)."""
    from omoide.store.postgres import restore_backup
    from tests.postgres.server import fresh_schema

    url = fresh_schema()

    def open_backup(dest: Path) -> Store:
        target = fresh_schema()
        restore_backup(target, dest)
        return open_store(target)

    return Backend("postgres", lambda: open_store(url), open_backup)


BACKENDS: dict[str, Callable[[Path], Backend]] = {"sqlite": _sqlite, "postgres": _postgres}


@pytest.fixture(params=sorted(BACKENDS))
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """The backend under test; every handle it opens is closed after the test."""
    made = BACKENDS[request.param](tmp_path)
    opened: list[Store] = []

    def track(store: Store) -> Store:
        opened.append(store)
        return store

    yield Backend(
        made.name,
        lambda: track(made.open()),
        lambda dest: track(made.open_backup(dest)),
    )
    for store in reversed(opened):
        store.close()


@pytest.fixture
def store(backend: Backend) -> Store:
    """A fresh, empty store."""
    return backend.open()
