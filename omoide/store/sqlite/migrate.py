"""Forward-only migrations keyed on ``PRAGMA user_version`` (the nexusAI seed's runner).

A fresh database is built whole from ``schema.sql`` and stamped with the latest version. An
existing one gets every ``migrations/NNNN_*.sql`` newer than its version, each in one transaction
together with its version bump. A database newer than this code is refused. Nothing inspects
columns to guess the schema.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from importlib import resources

from omoide.errors import MigrationError
from omoide.store.sqlite import cipher

_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str


def load_migrations() -> list[Migration]:
    folder = resources.files("omoide.store.sqlite") / "migrations"
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


def latest_version() -> int:
    return len(load_migrations())


def schema_sql() -> str:
    return (resources.files("omoide.store.sqlite") / "schema.sql").read_text("utf-8")


def current_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def pending(conn: sqlite3.Connection) -> list[Migration]:
    version = current_version(conn)
    latest = latest_version()
    if version > latest:
        raise MigrationError(
            f"database schema version {version} is newer than this omoide "
            f"(knows up to {latest}); upgrade omoide",
            version=version,
        )
    if version == 0 and _is_empty(conn):
        return []
    return [m for m in load_migrations() if m.version > version]


def migrate(conn: sqlite3.Connection, *, upto: int | None = None) -> list[str]:
    """Bring ``conn``'s database to the latest version (or ``upto``); return what ran."""
    version = current_version(conn)
    latest = latest_version()
    pending(conn)  # raises for a database newer than the code
    if version == 0 and _is_empty(conn) and upto is None:
        _run_in_transaction(conn, schema_sql(), latest)
        return ["schema.sql"]
    applied = []
    for migration in load_migrations():
        if migration.version <= version or (upto is not None and migration.version > upto):
            continue
        _run_in_transaction(conn, migration.sql, migration.version)
        applied.append(migration.name)
    return applied


def _is_empty(conn: sqlite3.Connection) -> bool:
    row = conn.execute("SELECT count(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")
    return int(row.fetchone()[0]) == 0


def _run_in_transaction(conn: sqlite3.Connection, sql: str, version: int) -> None:
    # executescript() commits first and runs statements one by one; wrapping the script in
    # BEGIN ... COMMIT makes the migration and its version stamp atomic.
    script = f"BEGIN IMMEDIATE;\n{sql}\nPRAGMA user_version = {int(version)};\nCOMMIT;"
    try:
        conn.executescript(script)
    except cipher.Error as exc:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise MigrationError(f"migration to version {version} failed: {exc}") from exc
