"""Storage behind the ``Store`` protocol, and the admin operations, chosen by location.

A *location* names where the data lives: a filesystem path or ``sqlite:///path`` (SQLite;
``sqlite:////abs/path`` is absolute, ``sqlite:///rel/path`` relative, as in SQLAlchemy), or a
``postgresql://`` URL (also ``postgres://``, ``postgresql+psycopg://``, ``postgresql+asyncpg://``)
for the PostgreSQL + pgvector backend. Nothing outside ``omoide.store`` imports a backend
module: the engine, the CLI and the server go through these functions and the ports they return.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from omoide.config import ANN_EF, ANN_THRESHOLD
from omoide.errors import InvalidInput
from omoide.store.protocol import Capability, NewMemory, SessionPatch, Store, Tx

__all__ = [
    "Capability",
    "NewMemory",
    "SessionPatch",
    "Store",
    "Tx",
    "apply_migrations",
    "backup",
    "change_encryption",
    "migration_status",
    "normalize_location",
    "open_store",
]

_SQLITE = "sqlite://"
_POSTGRES = ("postgresql://", "postgres://", "postgresql+")


def normalize_location(location: Path | str) -> Path | str:
    """A URL stays a string (``postgresql://...``, ``sqlite:///...``); anything else is a path
    (``~`` expanded). ``Path("postgresql://h/db")`` would be a relative file, not a server."""
    if isinstance(location, str) and "://" in location:
        return location.strip()
    return Path(location).expanduser()


def _is_postgres(location: Path | str) -> bool:
    return isinstance(location, str) and location.strip().lower().startswith(_POSTGRES)


def _sqlite_path(location: Path | str) -> Path:
    """The SQLite file a location names; ``StoreError``/``InvalidInput`` for anything else."""
    if isinstance(location, Path):
        return location.expanduser()
    text = location.strip()
    if text.startswith(_SQLITE):
        rest = text[len(_SQLITE) :]
        if not rest.startswith("/") or rest == "/":
            raise InvalidInput(f"expected sqlite:///path, got {location!r}")
        return Path(rest[1:]).expanduser()
    if "://" in text:
        raise InvalidInput(f"unknown store location {location!r}: use a path or sqlite:///path")
    if not text:
        raise InvalidInput("the store location is empty")
    return Path(text).expanduser()


def open_store(
    location: Path | str,
    *,
    auto_migrate: bool = True,
    encryption_key: str | None = None,
    search_timeout: float | None = None,
    ann_threshold: int | None = ANN_THRESHOLD,
    ann_ef: int = ANN_EF,
) -> Store:
    """Open the store at ``location``, creating it (and its parent folder) if missing.

    With ``auto_migrate`` (the default) an outdated schema is migrated first; without it an
    outdated or new database raises ``StoreError`` ("needs `omoide migrate`"). A database
    newer than this code raises ``MigrationError`` either way. ``encryption_key`` (a
    passphrase) opens or creates a SQLite file encrypted with SQLCipher; a wrong or missing
    key is a ``StoreError`` saying so. PostgreSQL ignores it (its exports use it, see
    ``omoide.engine.transfer.service``; the server's disk and TLS are the server's).
    ``search_timeout``: seconds a PostgreSQL search statement may run (SQLite ignores it).
    ``ann_threshold`` / ``ann_ef``: SQLite's vector graph (PostgreSQL ignores them): vectors in
    a tenant from which it is searched through one (``None``: never), candidates per query.
    """
    if _is_postgres(location):
        from omoide.store.postgres import PostgresStore

        if search_timeout is None:
            return PostgresStore(str(location), auto_migrate=auto_migrate)
        return PostgresStore(
            str(location), auto_migrate=auto_migrate, search_timeout=search_timeout
        )
    path = _sqlite_path(location)
    from omoide.store.sqlite import SQLiteStore  # backends load only when asked for

    return SQLiteStore(
        path,
        auto_migrate=auto_migrate,
        key=encryption_key,
        ann_threshold=ann_threshold,
        ann_ef=ann_ef,
    )


def migration_status(location: Path | str, *, encryption_key: str | None = None) -> dict[str, Any]:
    """``{"path", "version", "latest", "pending"}`` for ``location``; read-only.

    Creates nothing: a missing database reports version 0 and ``["schema.sql"]`` pending.
    """
    if _is_postgres(location):
        from omoide.store import postgres

        return postgres.migration_status(str(location))
    path = _sqlite_path(location)
    from omoide.store.sqlite import admin

    return admin.migration_status(path, encryption_key)


def apply_migrations(location: Path | str, *, encryption_key: str | None = None) -> dict[str, Any]:
    """Bring ``location`` (created if missing) to the latest schema.

    Returns ``{"path", "version", "latest", "applied"}``; each migration commits together with
    its version stamp, so a failure (``MigrationError``) leaves the last good version.
    """
    if _is_postgres(location):
        from omoide.store import postgres

        return postgres.apply_migrations(str(location))
    path = _sqlite_path(location)
    from omoide.store.sqlite import admin

    return admin.apply_migrations(path, encryption_key)


def backup(location: Path | str, dest: Path | str, *, encryption_key: str | None = None) -> None:
    """A complete, consistent copy of the store at ``location`` written to ``dest``.

    Safe while other processes write. ``InvalidInput`` if ``dest`` exists. The store is opened
    (and so migrated) first, exactly as a server starting on it would.
    """
    store = open_store(location, encryption_key=encryption_key)
    try:
        store.admin.backup(Path(dest))
    finally:
        store.close()


def change_encryption(location: Path | str, old_key: str | None, new_key: str | None) -> None:
    """Encrypt (``old_key=None``), decrypt (``new_key=None``) or re-key a SQLite file in place.

    Crash-safe (the original stays whole until the new file replaces it) and refused while
    another process has the file open. PostgreSQL encrypts on disk and in transit, not here.
    """
    if _is_postgres(location):
        raise InvalidInput(
            "a PostgreSQL database is not encrypted by omoide: use the server's disk or"
            " tablespace encryption and TLS (see docs/operations.md, Encryption at rest)"
        )
    from omoide.store.sqlite import rekey

    rekey.change_key(_sqlite_path(location), old_key, new_key)
