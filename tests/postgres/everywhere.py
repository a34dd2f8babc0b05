"""A pytest plugin that puts every store of a test run on PostgreSQL (the PostgreSQL pass).

    PYTHONPATH=. python -m pytest -p tests.postgres.everywhere tests/knowledge

Each SQLite file a test names becomes one schema on the run's server (``schema_for``: opening
the same file again, in this process or in a subprocess the test starts, reaches the same
schema, as reopening a file would). It replaces the store seam's functions that take a
location (``omoide.store.open_store`` and the admin calls), in this process and, through a
generated ``sitecustomize`` on ``PYTHONPATH``, in every Python subprocess a test starts.

Tests marked ``@pytest.mark.sqlite_only("why")`` check SQLite itself (its file, its
connections); they are deselected here and listed with their reasons at the end of the run,
so the pass shows no unexplained skip. A test marked ``@pytest.mark.postgres_gap("why")`` is
a known difference of the backend: an expected failure here (strict, so a fix is noticed). A
test run once per fake LLM server profile runs here with its first profile only (the profiles
differ in wire format, not in storage).
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from tests.postgres.server import SERVER_ENV, put_memories_on_postgres, server_url

_ROOT = Path(__file__).parents[2]
_deselected: list[tuple[str, str]] = []

# The ``sitecustomize`` of every Python subprocess of the run (found on ``PYTHONPATH``, which
# tests pass on even when they build a child's environment from scratch): the server's URL
# is written into it, so the child needs nothing else from its parent's environment.
_SITECUSTOMIZE = """\
import os
os.environ.setdefault({env!r}, {url!r})
from tests.postgres.server import redirect_files_to_postgres
redirect_files_to_postgres()
"""


def pytest_configure(config: pytest.Config) -> None:
    # Before any test starts a subprocess: it inherits the server and the redirect.
    url = server_url_or_exit()
    os.environ[SERVER_ENV] = url
    child = Path(tempfile.mkdtemp(prefix="omoide-pg-child-"))
    atexit.register(shutil.rmtree, child, True)
    (child / "sitecustomize.py").write_text(_SITECUSTOMIZE.format(env=SERVER_ENV, url=url))
    parts = [str(child), str(_ROOT), os.environ.get("PYTHONPATH", "")]
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in parts if p)


def server_url_or_exit() -> str:
    """The pass is pointless without a server: fail the run instead of skipping every test."""
    try:
        return server_url()
    except pytest.skip.Exception as exc:
        raise pytest.UsageError(f"the PostgreSQL pass cannot run: {exc.msg}") from None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    kept: list[pytest.Item] = []
    first_profile: dict[tuple[str, ...], object] = {}
    other_profiles = 0
    for item in items:
        marker = item.get_closest_marker("sqlite_only")
        if marker is not None:
            reason = str(marker.args[0] if marker.args else marker.kwargs.get("reason", ""))
            if not reason:
                raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.sqlite_only needs a reason")
            _deselected.append((item.nodeid, reason))
            continue
        gap = item.get_closest_marker("postgres_gap")
        if gap is not None:
            item.add_marker(pytest.mark.xfail(reason=f"PostgreSQL gap: {gap.args[0]}", strict=True))
        params = dict(getattr(getattr(item, "callspec", None), "params", {}))
        if "llm_profile" in params:
            profile = params.pop("llm_profile")
            others = repr(sorted(params.items(), key=lambda kv: kv[0]))
            key = (str(item.path), getattr(item, "originalname", item.name), others)
            if first_profile.setdefault(key, profile) != profile:
                other_profiles += 1
                continue
        kept.append(item)
    if other_profiles:
        _deselected.append(
            (
                f"{other_profiles} runs with another LLM server profile",
                "each test runs with its first profile only: the servers' wire formats are the"
                " same on both backends (all profiles run in the SQLite pass)",
            )
        )
    if len(kept) < len(items):
        config.hook.pytest_deselected(items=[i for i in items if i not in set(kept)])
        items[:] = kept


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _deselected:
        return
    terminalreporter.section("not run on PostgreSQL (the SQLite pass runs them)")
    for what, reason in _deselected:
        terminalreporter.write_line(f"{what}: {reason}")


@pytest.fixture(autouse=True)
def _every_store_on_postgres(monkeypatch: pytest.MonkeyPatch) -> None:
    put_memories_on_postgres(monkeypatch)
