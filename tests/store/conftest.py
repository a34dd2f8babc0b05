"""The backends the store contract runs on. A new backend adds one factory to ``BACKENDS``.

A factory gets the test's ``tmp_path`` and returns a ``Backend`` (``contract.py``) for a fresh,
empty database of its own (PostgreSQL: e.g. a schema or database named after ``tmp_path``):
``open()`` opens one more handle on that database, as a second process would (the concurrency
contracts race two of them), and ``open_backup(dest)`` opens what ``store.admin.backup(dest)``
wrote. Every test taking ``store`` or ``backend`` then runs once per backend.

Not parametrised, because they are about SQLite itself: ``test_migrations.py`` and
``test_locations.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from omoide.store import open_store
from omoide.store.protocol import Store
from tests.store.contract import Backend


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
