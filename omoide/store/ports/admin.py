"""Metadata, statistics, backups and whole-tenant deletes.

``AdminReads`` is read outside a transaction (``store.admin``);
``AdminWrites`` is used inside one (``with store.transaction() as tx: tx.admin...``)
and sees the transaction's own writes.

Tenant rule: ``delete_scope`` is the one tenant operation; the others are about the whole store
(schema, metadata shared by all tenants, counts over all tenants, a copy of everything) and
belong to operators, never to a tenant's request. Opening, migrating and backing up a store by
location (without a ``Store`` in hand) are ``omoide.store.migration_status`` /
``apply_migrations`` / ``backup``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

from omoide.types import (
    Scope,
)


class AdminReads(Protocol):
    """Whole-store reads and the backup."""

    def schema_version(self) -> int:
        """The schema version of the data (the number of the last migration applied)."""
        ...

    def get_meta(self, key: str) -> str | None:
        """A store-wide setting (e.g. the embedder a store was indexed with), or None."""
        ...

    def stats(self) -> dict[str, int]:
        """Row counts over all tenants: ``memories``, ``memory_vectors``, ``memories_fts``
        (full-text rows), ``sessions``, ``episodes``, ``history``, ``jobs``, ``entities``,
        ``relationships``, ``variables``. A healthy store has as many full-text rows as
        memories."""
        ...

    def size_bytes(self) -> int:
        """Bytes the store takes on disk, every tenant together (SQLite: the file with its
        ``-wal`` and ``-shm`` files; PostgreSQL: the tables, indexes and TOAST of the store's
        schema)."""
        ...

    def integrity(self, *, recheck: bool = False, max_seconds: float = 30.0) -> list[str] | None:
        """Problems in the stored data: ``[]`` when sound, ``None`` when not (yet) known.

        The first call checks the stored data (SQLite: ``PRAGMA quick_check``, stopped after
        a couple of seconds, so a first ``/health`` after start-up answers promptly; opening
        the store never waits and starts no thread); any statement that failed on a corrupt
        file since is remembered and returned too. ``recheck`` runs the check again now, for
        at most ``max_seconds`` (``None`` if it did not finish: ``omoide doctor``). A backend
        without such a check returns the errors it saw, or ``None``."""
        ...

    def backup(self, dest: Path) -> None:
        """Write a complete, consistent copy of the store to ``dest`` (SQLite: one file, by
        ``VACUUM INTO``), safe while others read and write; a copy opens as a store of its
        own. ``InvalidInput`` if ``dest`` already exists."""
        ...

    def export_records(
        self, user_id: str | None, scope_id: str | None, batch: int
    ) -> Iterator[tuple[str, list[dict[str, Any]]]]:
        """Every record of the selected tenants as ``(kind, up to batch records)``, kinds in
        ``RECORD_KINDS`` order, each in insertion order (``omoide.store.ports.transfer`` gives
        the fields). ``user_id``/``scope_id`` ``None``: every user / every scope.

        All batches come from one snapshot taken at the first ``next()``: writes committed
        meanwhile are not seen, and nothing blocks them. Bounded memory: batches are read
        as the iterator advances. Closing the iterator early releases the snapshot."""
        ...


class AdminWrites(Protocol):
    """Whole-store and whole-tenant writes, in the caller's transaction."""

    def set_meta(self, key: str, value: str) -> None:
        """Create or replace a store-wide setting."""
        ...

    def delete_scope(self, scope: Scope) -> int:
        """Erase everything of one tenant: memories (with history, vectors, full-text rows),
        sessions and episodes, projects, jobs, entities and relationships, variables and
        token counters. Returns how many memories went; other tenants are untouched."""
        ...

    def import_records(self, kind: str, records: Sequence[dict[str, Any]]) -> list[int]:
        """Write exported records of one kind as they are (ids, times, counters kept),
        skipping those the store already holds (the import rule in
        ``omoide.store.ports.transfer``); return the positions in ``records`` written.

        Writes the search rows that follow from a record in the same transaction (a memory's
        full-text row and vector), but no history (``history`` records carry it) and no
        jobs. ``InvalidInput`` for an unknown kind or a malformed record, ``Conflict`` and
        ``NotFound`` as the import rule says."""
        ...

    def delete_everything(self) -> None:
        """Erase every tenant's data and the store-wide settings; the schema stays."""
        ...
