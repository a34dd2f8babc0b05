"""Operations on a database file that run without an engine: migrations and backups."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from omoide.store.sqlite import SQLiteStore, migrate
from omoide.store.sqlite.store import connect


def migration_status(path: Path) -> dict[str, Any]:
    """Report the schema version and pending migrations; changes nothing, creates nothing."""
    if not path.exists():
        return {
            "path": str(path),
            "version": 0,
            "latest": migrate.latest_version(),
            "pending": ["schema.sql"],
        }
    conn = connect(path)
    try:
        return {
            "path": str(path),
            "version": migrate.current_version(conn),
            "latest": migrate.latest_version(),
            "pending": [m.name for m in migrate.pending(conn)],
        }
    finally:
        conn.close()


def apply_migrations(path: Path) -> dict[str, Any]:
    """Bring the database at ``path`` (created if missing) to the latest schema."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = connect(path)
    try:
        applied = migrate.migrate(conn)
        return {
            "path": str(path),
            "version": migrate.current_version(conn),
            "latest": migrate.latest_version(),
            "applied": applied,
        }
    finally:
        conn.close()


def backup(path: Path, dest: Path) -> None:
    """A complete single-file snapshot of ``path`` at ``dest``, safe while others write."""
    store = SQLiteStore(path)
    try:
        store.admin.backup(dest)
    finally:
        store.close()
