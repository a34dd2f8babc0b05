"""Operations on a store that run without an engine: migrations and backups.

Thin calls through the store seam (``omoide.store``), which picks the backend from the
location; kept here because the CLI calls them by these names.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from omoide import store


def migration_status(path: Path | str) -> dict[str, Any]:
    """Report the schema version and pending migrations; changes nothing, creates nothing."""
    return store.migration_status(path)


def apply_migrations(path: Path | str) -> dict[str, Any]:
    """Bring the database at ``path`` (created if missing) to the latest schema."""
    return store.apply_migrations(path)


def backup(path: Path | str, dest: Path) -> None:
    """A complete single-file snapshot of ``path`` at ``dest``, safe while others write."""
    store.backup(path, dest)
