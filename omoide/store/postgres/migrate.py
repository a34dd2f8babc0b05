"""Forward-only migrations for PostgreSQL, tracked in ``schema_migrations``.

Each ``migrations/NNNN_*.sql`` runs in one transaction together with its row in
``schema_migrations``, so a failure leaves the last good version. All of it happens under a
transaction-level advisory lock keyed on the schema: servers starting together on one database
queue on the lock, and the ones that get it after the first find nothing left to do. A database
newer than this code is refused, as on SQLite.
"""

from __future__ import annotations

import zlib

import psycopg

from omoide.errors import MigrationError
from omoide.store.postgres.db import Conn
from omoide.store.postgres.segmenting import resegment
from omoide.store.sql import migrate as sql_migrate
from omoide.store.sql.migrate import Migration
from omoide.types import now_ms

_TABLE = """CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at BIGINT NOT NULL
)"""
# Data steps that SQL cannot do, run after a migration's SQL in its transaction.
_AFTER = {5: resegment}


def load_migrations() -> list[Migration]:
    return sql_migrate.load_migrations("omoide.store.postgres")


def latest_version() -> int:
    return len(load_migrations())


def current_version(conn: Conn) -> int:
    """The highest applied version; 0 for a database without ``schema_migrations``."""
    row = conn.execute("SELECT to_regclass('schema_migrations') IS NOT NULL AS present").fetchone()
    if row is None or not row["present"]:
        return 0
    found = conn.execute("SELECT coalesce(max(version), 0) AS v FROM schema_migrations").fetchone()
    return int(found["v"]) if found else 0


def pending(conn: Conn) -> list[Migration]:
    # raises for a database newer than the code
    return sql_migrate.newer("omoide.store.postgres", current_version(conn))


def _lock_key(conn: Conn) -> int:
    """One advisory-lock key per schema, so tenants' schemas on one server do not queue."""
    row = conn.execute("SELECT current_schema() AS s").fetchone()
    schema = str(row["s"]) if row else "public"
    return zlib.crc32(f"omoide-migrate:{schema}".encode())


def migrate(conn: Conn, *, upto: int | None = None) -> list[str]:
    """Bring the database to the latest version (or ``upto``); return the names that ran.

    ``conn`` must be in autocommit mode: every migration is its own transaction, and each
    takes the advisory lock before reading the version, so exactly one process applies it.
    """
    applied: list[str] = []
    for migration in load_migrations():
        if upto is not None and migration.version > upto:
            break
        try:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_lock_key(conn),))
                conn.execute(_TABLE)
                pending(conn)  # raises for a database newer than the code
                if current_version(conn) >= migration.version:
                    continue
                conn.execute(migration.sql.encode())
                if (step := _AFTER.get(migration.version)) is not None:
                    step(conn)
                conn.execute(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (%s, %s, %s)",
                    (migration.version, migration.name, now_ms()),
                )
        except psycopg.Error as exc:
            raise MigrationError(f"migration {migration.name} failed: {exc}") from exc
        applied.append(migration.name)
    return applied
