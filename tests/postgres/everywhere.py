"""A pytest plugin that puts every ``Memory`` of a test run on PostgreSQL.

    PYTHONPATH=. python -m pytest -p tests.postgres.everywhere tests/knowledge

Each distinct store path a test opens becomes one fresh schema on the run's server (opening
the same path again reaches the same schema, as reopening a file would). It replaces the one
place the library opens its store (``omoide.memory.open_store``); tests that reach into the
SQLite file itself (``store._writer``, the file on disk) still assume SQLite and fail here.
"""

from __future__ import annotations

import pytest

from tests.postgres.server import put_memories_on_postgres


@pytest.fixture(autouse=True)
def _every_memory_on_postgres(monkeypatch: pytest.MonkeyPatch) -> None:
    put_memories_on_postgres(monkeypatch)
