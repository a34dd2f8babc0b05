"""Storage backends behind the ``Store`` protocol."""

from __future__ import annotations

from pathlib import Path

from omoide.store.protocol import Capability, NewMemory, SessionPatch, Store, Tx

__all__ = ["Capability", "NewMemory", "SessionPatch", "Store", "Tx", "open_store"]


def open_store(path: Path | str) -> Store:
    """Open (creating and migrating if needed) the SQLite store at ``path``."""
    from omoide.store.sqlite import SQLiteStore

    return SQLiteStore(path)
