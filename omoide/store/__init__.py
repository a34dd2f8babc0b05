"""Storage backends behind the ``Store`` protocol."""

from __future__ import annotations

from pathlib import Path

from omoide.store.protocol import Capability, NewMemory, SessionPatch, Store, Tx

__all__ = ["Capability", "NewMemory", "SessionPatch", "Store", "Tx", "open_store"]

_POSTGRES = ("postgresql://", "postgres://", "postgresql+")


def open_store(path: Path | str) -> Store:
    """Open (creating and migrating if needed) the store at ``path``: a ``postgresql://`` URL
    (also ``postgres://``, ``postgresql+psycopg://``, ``postgresql+asyncpg://``) opens the
    PostgreSQL backend, anything else the SQLite file."""
    if isinstance(path, str) and path.strip().lower().startswith(_POSTGRES):
        from omoide.store.postgres import PostgresStore  # backends load only when asked for

        return PostgresStore(path)
    from omoide.store.sqlite import SQLiteStore

    return SQLiteStore(path)
