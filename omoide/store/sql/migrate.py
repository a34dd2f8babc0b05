"""What both backends' migration runners share: the numbered migration files of a package, and
the refusal of a database newer than this code. Applying them is each backend's own (SQLite
stamps ``PRAGMA user_version``; PostgreSQL records ``schema_migrations`` under an advisory lock).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

from omoide.errors import MigrationError

_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str


def load_migrations(package: str) -> list[Migration]:
    """The ``migrations/NNNN_*.sql`` files of ``package``, in order, numbered without a gap."""
    folder = resources.files(package) / "migrations"
    found = []
    for entry in folder.iterdir():
        match = _NAME.match(entry.name)
        if match:
            found.append(Migration(int(match.group(1)), entry.name, entry.read_text("utf-8")))
    found.sort(key=lambda m: m.version)
    for expected, migration in enumerate(found, start=1):
        if migration.version != expected:
            raise MigrationError(f"migration numbering has a gap at {migration.name}")
    return found


def newer(package: str, version: int) -> list[Migration]:
    """The migrations after ``version``; ``MigrationError`` for a database newer than the code."""
    found = load_migrations(package)
    if version > len(found):
        raise MigrationError(
            f"database schema version {version} is newer than this omoide "
            f"(knows up to {len(found)}); upgrade omoide",
            version=version,
        )
    return [m for m in found if m.version > version]


def report(path: str, version: int, latest: int, **migrations: list[str]) -> dict[str, Any]:
    """What ``migration_status`` / ``apply_migrations`` answer: where, the schema version, the
    latest one, and the migrations pending or applied."""
    return {"path": path, "version": version, "latest": latest, **migrations}
