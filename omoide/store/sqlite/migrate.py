"""Forward-only migrations keyed on ``PRAGMA user_version``.

A fresh database is built whole from ``schema.sql`` and stamped with the latest version. An
existing one gets every ``migrations/NNNN_*.sql`` newer than its version, each in one transaction
together with its version bump. A database newer than this code is refused. Nothing inspects
columns to guess the schema.
"""

from __future__ import annotations

import sqlite3
from importlib import resources

from omoide.errors import MigrationError
from omoide.store.sql import migrate as sql_migrate
from omoide.store.sql.migrate import Migration
from omoide.store.sqlite import cipher


def load_migrations() -> list[Migration]:
    return sql_migrate.load_migrations("omoide.store.sqlite")


def latest_version() -> int:
    return len(load_migrations())


def schema_sql() -> str:
    return (resources.files("omoide.store.sqlite") / "schema.sql").read_text("utf-8")


def current_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def pending(conn: sqlite3.Connection) -> list[Migration]:
    version = current_version(conn)
    found = sql_migrate.newer("omoide.store.sqlite", version)  # raises for a newer database
    if version == 0 and _is_empty(conn):
        return []
    return found


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
