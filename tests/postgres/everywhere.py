"""A pytest plugin that puts every store of a test run on PostgreSQL (the PostgreSQL pass).

    PYTHONPATH=. python -m pytest -p tests.postgres.everywhere tests/knowledge

Each SQLite file a test names becomes one schema on the run's server (``schema_for``: opening
the same file again, in this process or in a subprocess the test starts, reaches the same
schema, as reopening a file would). It replaces the store seam's functions that take a
location (``omoide.store.open_store`` and the admin calls), in this process and, through
``child/sitecustomize.py``, in every Python subprocess whose environment it inherits.

Tests marked ``@pytest.mark.sqlite_only("why")`` check SQLite itself (its file, its
connections); they are deselected here and listed with their reasons at the end of the run,
so the pass shows no unexplained skip.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.postgres.server import SERVER_ENV, put_memories_on_postgres, server_url

_CHILD = Path(__file__).parent / "child"
_ROOT = Path(__file__).parents[2]
_deselected: list[tuple[str, str]] = []


def pytest_configure(config: pytest.Config) -> None:
    # Before any test starts a subprocess: it inherits the server and the redirect.
    os.environ[SERVER_ENV] = server_url_or_exit()
    parts = [str(_CHILD), str(_ROOT), os.environ.get("PYTHONPATH", "")]
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in parts if p)


def server_url_or_exit() -> str:
    """The pass is pointless without a server: fail the run instead of skipping every test."""
    try:
        return server_url()
    except pytest.skip.Exception as exc:
        raise pytest.UsageError(f"the PostgreSQL pass cannot run: {exc.msg}") from None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    kept = []
    for item in items:
        marker = item.get_closest_marker("sqlite_only")
        if marker is None:
            kept.append(item)
            continue
        reason = str(marker.args[0] if marker.args else marker.kwargs.get("reason", ""))
        if not reason:
            raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.sqlite_only needs a reason")
        _deselected.append((item.nodeid, reason))
    if _deselected:
        config.hook.pytest_deselected(items=[i for i in items if i not in kept])
        items[:] = kept


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _deselected:
        return
    terminalreporter.section(f"{len(_deselected)} SQLite-only tests not run on PostgreSQL")
    for nodeid, reason in _deselected:
        terminalreporter.write_line(f"{nodeid}: {reason}")


@pytest.fixture(autouse=True)
def _every_store_on_postgres(monkeypatch: pytest.MonkeyPatch) -> None:
    put_memories_on_postgres(monkeypatch)
