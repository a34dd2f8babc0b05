"""Operations on a store that run without an engine: migrations and backups.

Thin calls through the store seam (``omoide.store``), which picks the backend from the
location; kept here because the CLI calls them by these names.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from omoide import store


def migration_status(path: Path | str, key: str | None = None) -> dict[str, Any]:
    """Report the schema version and pending migrations; changes nothing, creates nothing."""
    return store.migration_status(path, encryption_key=key)


def apply_migrations(path: Path | str, key: str | None = None) -> dict[str, Any]:
    """Bring the database at ``path`` (created if missing) to the latest schema."""
    return store.apply_migrations(path, encryption_key=key)


def backup(path: Path | str, dest: Path, key: str | None = None) -> None:
    """A complete single-file snapshot of ``path`` at ``dest``, safe while others write;
    encrypted with the database's key when it has one."""
    store.backup(path, dest, encryption_key=key)


def change_encryption(path: Path | str, old_key: str | None, new_key: str | None) -> None:
    """Encrypt (no old key), decrypt (no new key) or re-key the SQLite file in place."""
    store.change_encryption(path, old_key, new_key)
