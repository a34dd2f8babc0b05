"""``AdminReads`` / ``AdminWrites``: metadata, row counts and tenant deletes, written once.

Files and servers differ in everything else (their size, integrity checks, backups, export and
import, what a delete must also clear); that stays each backend's, in an ``AdminStorage`` the
shared ports compose.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from omoide.store.sql.dialect import Conn, Dialect, Reader
from omoide.types import Scope

# Tenant tables: deleting a tenant's rows here cascades (the schemas' foreign keys) to
# episodes, vectors, sources, relationships, job steps, chunk state and ledger.
TENANT_TABLES = (
    *("memories", "sessions", "projects", "history", "jobs", "entities", "variables"),
    *("dreaming_schedules", "scope_configs", "token_usage"),
)
_COUNTED = (
    *("memories", "memory_vectors", "sessions", "episodes", "history", "jobs"),
    *("entities", "relationships", "variables"),
)


class AdminStorage(Protocol):
    """What a backend does its own way for the admin ports."""

    def schema_version(self) -> int: ...

    def keyword_rows(self, conn: Conn, memories: int) -> int:
        """How many memories the keyword index holds (``memories``: how many there are)."""
        ...

    def size_bytes(self) -> int: ...

    def integrity(self, recheck: bool, max_seconds: float) -> list[str] | None: ...

    def backup(self, dest: Path) -> None: ...

    def export_records(
        self, user_id: str | None, scope_id: str | None, batch: int
    ) -> Iterator[tuple[str, list[dict[str, Any]]]]: ...


class AdminWriteStorage(Protocol):
    """What a backend does its own way for the admin writes, in the caller's transaction."""

    def scope_deleted(self, scope: Scope) -> None:
        """The tenant's rows are gone from ``TENANT_TABLES``: clear what else is its own."""
        ...

    def import_records(self, kind: str, records: Sequence[dict[str, Any]]) -> list[int]: ...

    def delete_everything(self) -> None: ...


class SQLAdminReads:
    """Schema version, metadata, row counts and backups (see ``AdminReads``)."""

    def __init__(self, db: Reader, dialect: Dialect, own: AdminStorage) -> None:
        self._db = db
        self._d = dialect
        self._own = own

    def schema_version(self) -> int:
        return self._own.schema_version()

    def get_meta(self, key: str) -> str | None:
        with self._db.read() as conn:
            row = conn.execute(self._d.sql("SELECT value FROM meta WHERE key = ?"), (key,))
            found = row.fetchone()
        return None if found is None else str(found["value"])

    def stats(self) -> dict[str, int]:
        out: dict[str, int] = {}
        with self._db.read() as conn:
            for table in _COUNTED:
                out[table] = int(conn.execute(f"SELECT count(*) AS n FROM {table}").fetchone()["n"])
            out["memories_fts"] = self._own.keyword_rows(conn, out["memories"])
        return out

    def size_bytes(self) -> int:
        return self._own.size_bytes()

    def integrity(self, *, recheck: bool = False, max_seconds: float = 30.0) -> list[str] | None:
        return self._own.integrity(recheck, max_seconds)

    def backup(self, dest: Path) -> None:
        self._own.backup(dest)

    def export_records(
        self, user_id: str | None, scope_id: str | None, batch: int
    ) -> Iterator[tuple[str, list[dict[str, Any]]]]:
        return self._own.export_records(user_id, scope_id, batch)


W = TypeVar("W", bound=AdminWriteStorage)


class SQLAdminWrites(Generic[W]):
    """Metadata and whole-tenant deletes in the caller's transaction (see ``AdminWrites``);
    ``own`` is the backend's part (the store reaches it after the transaction)."""

    def __init__(self, conn: Conn, dialect: Dialect, own: W) -> None:
        self._conn = conn
        self._d = dialect
        self.own = own

    def set_meta(self, key: str, value: str) -> None:
        self._conn.execute(
            self._d.sql(
                "INSERT INTO meta (key, value) VALUES (?, ?)"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value"
            ),
            (key, value),
        )

    def delete_scope(self, scope: Scope) -> int:
        d, args = self._d, (scope.user_id, scope.scope_id)
        row = self._conn.execute(
            d.sql("SELECT count(*) AS n FROM memories WHERE user_id = ? AND scope_id = ?"), args
        ).fetchone()
        for table in TENANT_TABLES:
            self._conn.execute(
                d.sql(f"DELETE FROM {table} WHERE user_id = ? AND scope_id = ?"), args
            )
        self.own.scope_deleted(scope)
        return int(row["n"])

    def import_records(self, kind: str, records: Sequence[dict[str, Any]]) -> list[int]:
        return self.own.import_records(kind, records)

    def delete_everything(self) -> None:
        self.own.delete_everything()
