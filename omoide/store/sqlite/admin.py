"""SQLite's part of the admin ports (``store.sql.admin``), and the file operations that need no
open store.

``migration_status``, ``apply_migrations`` and ``backup_file`` work on a path; they are what
``omoide.store.migration_status`` / ``apply_migrations`` / ``backup`` dispatch to.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from omoide.errors import InvalidInput, StoreError
from omoide.store import files
from omoide.store.sql import migrate as sql_migrate
from omoide.store.sql.dialect import Conn
from omoide.store.sqlite import cipher, export, import_, keyword, migrate
from omoide.store.sqlite.db import Database, connect
from omoide.types import Scope

_ALL_TABLES = (
    *("memories", "episodes", "sessions", "projects", "history", "jobs", "meta", "entities"),
    *("variables", "token_usage", "dreaming_schedules", "scope_configs"),
)
FIRST_CHECK_S = 2.0  # budget of the check the first health report runs (~GBs/s when cached)


class SQLiteAdmin:
    """SQLite's part of the admin reads (see ``AdminStorage``): a file and its checks."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def schema_version(self) -> int:
        return migrate.current_version(self._db.reader())

    def keyword_rows(self, conn: Conn, memories: int) -> int:
        del memories
        return int(conn.execute("SELECT count(*) FROM memories_fts_docsize").fetchone()[0])

    def size_bytes(self) -> int:
        path = self._db.path
        files = [path, *(path.with_name(path.name + s) for s in ("-wal", "-shm"))]
        return sum(f.stat().st_size for f in files if f.is_file())

    def backup(self, dest: Path) -> None:
        backup_file(self._db.path, dest, self._db.key)

    def export_records(
        self, user_id: str | None, scope_id: str | None, batch: int
    ) -> Iterator[tuple[str, list[dict[str, Any]]]]:
        return export.export_records(self._db.path, user_id, scope_id, batch, self._db.key)

    def integrity(self, recheck: bool, max_seconds: float) -> list[str] | None:
        if recheck or not self._db.checked:
            budget = max_seconds if recheck else FIRST_CHECK_S
            self._db.checked = True  # a check that ran out of time is not retried per call
            found = self._db.quick_check(budget)
            if found is not None:
                self._db.last_check = found
        found = self._db.last_check
        if found is None:
            return None if not self._db.corruption else list(self._db.corruption)
        return [*found, *self._db.corruption]


class SQLiteAdminWrites:
    """SQLite's part of the admin writes (see ``AdminWriteStorage``)."""

    def __init__(self, conn: sqlite3.Connection, tokenizer: keyword.Tokenizer) -> None:
        self._conn = conn
        self._tokenizer = tokenizer

    def scope_deleted(self, scope: Scope) -> None:
        del scope  # the keyword index follows the memories by trigger

    def import_records(self, kind: str, records: Sequence[dict[str, Any]]) -> list[int]:
        written = import_.import_records(self._conn, kind, records)
        if kind == "memory" and written:
            # Imported memories join the tenant's keyword index (and its statistics) at once.
            ids = [records[i]["id"] for i in written]
            marks = ",".join("?" * len(ids))
            docs = self._conn.execute(
                "SELECT m.seq, m.tenant_token, m.text, m.context FROM memories m"
                f" WHERE m.id IN ({marks}) AND NOT EXISTS"
                " (SELECT 1 FROM kw_docs d WHERE d.memory_seq = m.seq)",
                ids,
            ).fetchall()
            keyword.index_memories(self._conn, self._tokenizer, [tuple(r) for r in docs])
        return written

    def delete_everything(self) -> None:
        for table in _ALL_TABLES:
            self._conn.execute(f"DELETE FROM {table}")


def backup_file(path: Path, dest: Path | str, key: str | None = None) -> None:
    """A complete single-file snapshot of ``path``, safe while others write (VACUUM INTO).

    SQLCipher's VACUUM INTO writes the copy encrypted with the same key and salt."""
    dest = Path(dest).expanduser()
    if dest.exists() or dest.is_symlink():  # a dangling symlink too: never written through
        raise InvalidInput(f"{dest} already exists; choose a new path")
    files.private_dir(dest.parent)
    files.create_exclusive(dest)  # a snapshot holds every conversation: 0600 before it is filled
    conn = connect(path, key)
    try:
        conn.execute("VACUUM INTO ?", (str(dest),))
    except BaseException as exc:
        dest.unlink(missing_ok=True)  # a failed copy (a full disk) must not look like a backup
        if isinstance(exc, sqlite3.Error):
            raise StoreError(f"backup to {dest} failed: {exc}", retryable=False) from exc
        raise
    finally:
        conn.close()


def migration_status(path: Path, key: str | None = None) -> dict[str, Any]:
    """The schema version and pending migrations; changes nothing, creates nothing."""
    latest = migrate.latest_version()
    if not path.exists():
        return sql_migrate.report(str(path), 0, latest, pending=["schema.sql"])
    # Read-only and without WAL set-up: a status check must not convert or create anything.
    # (A URI needs an absolute path: --db is relative to the working directory.)
    try:
        conn = cipher.open_connection(f"{path.absolute().as_uri()}?mode=ro", key, uri=True)
    except cipher.Error as exc:
        raise StoreError(f"cannot open {path}: {exc}", retryable=False) from exc
    try:
        pending = [m.name for m in migrate.pending(conn)]
        return sql_migrate.report(str(path), migrate.current_version(conn), latest, pending=pending)
    except cipher.Error as exc:  # a directory, a file that is not SQLite
        raise StoreError(f"cannot open {path}: {exc}", retryable=False) from exc
    finally:
        conn.close()


def apply_migrations(path: Path, key: str | None = None) -> dict[str, Any]:
    """Bring the database at ``path`` (created if missing) to the latest schema."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        conn = connect(path, key)
    except cipher.Error as exc:  # a directory, a file that is not SQLite
        raise StoreError(f"cannot open {path}: {exc}", retryable=False) from exc
    try:
        applied = migrate.migrate(conn)
        version, latest = migrate.current_version(conn), migrate.latest_version()
        return sql_migrate.report(str(path), version, latest, applied=applied)
    finally:
        conn.close()
