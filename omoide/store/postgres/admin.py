"""PostgreSQL's part of the admin ports (``store.sql.admin``), and the operations that need no
open store.

``migration_status`` and ``apply_migrations`` work on a URL; they are what
``omoide.store.migration_status`` / ``apply_migrations`` dispatch to for ``postgresql://``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from omoide.store.postgres import backup, counts, export, import_, migrate
from omoide.store.postgres.db import Conn as PgConn
from omoide.store.postgres.db import Database, connect, redacted
from omoide.store.sql import migrate as sql_migrate
from omoide.store.sql.dialect import Conn
from omoide.types import Scope


class PostgresAdmin:
    """PostgreSQL's part of the admin reads (see ``AdminStorage``): a server and its schema."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def schema_version(self) -> int:
        with self._db.read() as conn:
            return migrate.current_version(conn)

    def keyword_rows(self, conn: Conn, memories: int) -> int:
        del conn
        return memories  # the full-text vector is a column of the row

    def size_bytes(self) -> int:
        with self._db.read() as conn:
            row = conn.execute(
                "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) AS n FROM pg_class c"
                " JOIN pg_namespace s ON s.oid = c.relnamespace"
                " WHERE s.nspname = current_schema() AND c.relkind IN ('r', 'm')"
            ).fetchone()
        return int(row["n"]) if row else 0

    def integrity(self, recheck: bool, max_seconds: float) -> list[str] | None:
        # PostgreSQL verifies its own pages (WAL, data checksums when enabled) and reports a
        # damaged one as an error on the statement that reads it; this build has no amcheck
        # extension to scan for more, so a server that answers counts as sound.
        del recheck, max_seconds
        with self._db.read() as conn:
            conn.execute("SELECT 1")
        return []

    def backup(self, dest: Path) -> None:
        # at the session's statement timeout, not at the search's a pooled connection may
        # still carry from its last use (``read_one`` sends the change before the backup's
        # own transaction begins)
        with self._db.read_one() as conn:
            backup.write(conn, Path(dest))

    def export_records(
        self, user_id: str | None, scope_id: str | None, batch: int
    ) -> Iterator[tuple[str, list[dict[str, Any]]]]:
        return export.export_records(self._db, user_id, scope_id, batch)


class PostgresAdminWrites:
    """PostgreSQL's part of the admin writes (see ``AdminWriteStorage``)."""

    def __init__(self, conn: PgConn) -> None:
        self._conn = conn
        # rows imported by tenant, for the maintenance after the commit (``upkeep``)
        self.written: dict[tuple[str, str], int] = {}

    def scope_deleted(self, scope: Scope) -> None:
        # the tenant's words stay in its document-frequency deltas (summing to zero) until
        # folded: fold them now, no concurrent fold beside this one
        counts.lock_tenant(self._conn, scope.user_id, scope.scope_id)
        counts.fold_lexemes(self._conn, scope.user_id, scope.scope_id)

    def import_records(self, kind: str, records: Sequence[dict[str, Any]]) -> list[int]:
        written = import_.import_records(self._conn, kind, records)
        for position in written:
            record = records[position]
            if isinstance(record.get("user_id"), str) and isinstance(record.get("scope_id"), str):
                tenant = (record["user_id"], record["scope_id"])
                self.written[tenant] = self.written.get(tenant, 0) + 1
        return written

    def delete_everything(self) -> None:
        # TRUNCATE takes an exclusive lock; DELETE keeps this an ordinary transaction that
        # concurrent readers do not wait for.
        for table in reversed(backup.TABLES):
            self._conn.execute(f"DELETE FROM {table}")
        counts.fold_all_lexemes(self._conn)  # the deleted words go too


def migration_status(url: str) -> dict[str, Any]:
    """The schema version and pending migrations; changes nothing."""
    with connect(url) as conn:
        pending = [m.name for m in migrate.pending(conn)]
        version = migrate.current_version(conn)
    return sql_migrate.report(redacted(url), version, migrate.latest_version(), pending=pending)


def apply_migrations(url: str) -> dict[str, Any]:
    """Bring the database at ``url`` to the latest schema (under the advisory lock)."""
    with connect(url) as conn:
        applied = migrate.migrate(conn)
        version = migrate.current_version(conn)
    return sql_migrate.report(redacted(url), version, migrate.latest_version(), applied=applied)


def restore_backup(url: str, src: Path) -> None:
    """Load the backup file ``src`` (from ``AdminReads.backup``) into the empty database at
    ``url``."""
    with connect(url) as conn:
        backup.restore(conn, Path(src))
