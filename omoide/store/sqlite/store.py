"""The embedded SQLite store: one file, WAL, a per-tenant keyword index, an exact vector cache.

``SQLiteStore`` holds one read-port object per aggregate, each over the shared ``Database``
(connections) and, for memories, the process-wide vector cache and keyword tokenizer. Every
``transaction()`` is ``BEGIN IMMEDIATE`` on the single writer connection and hands out a
``SQLiteTx`` whose write ports share that connection.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from omoide.errors import StoreError
from omoide.store import files
from omoide.store.protocol import Capability
from omoide.store.sql.admin import SQLAdminReads
from omoide.store.sql.tx import shared_reads
from omoide.store.sqlite import ann, keyword, migrate, postings
from omoide.store.sqlite.admin import SQLiteAdmin
from omoide.store.sqlite.db import Database, connect
from omoide.store.sqlite.memory_reads import SQLiteMemoryReads
from omoide.store.sqlite.postings import PostingsCache
from omoide.store.sqlite.tx import LAYOUTS, SQLiteTx, transaction_ports
from omoide.store.sqlite.vectors import VectorCache, trim_log

__all__ = ["SQLiteStore", "connect"]

_TRIM_EVERY = 10_000  # transactions between trims of vec_log and kw_log


class SQLiteStore:
    """A ``Store`` on one SQLite file. ``auto_migrate=False`` refuses an outdated schema;
    ``key`` opens (or creates) it encrypted."""

    capabilities = frozenset(
        {Capability.KEYWORD_SEARCH, Capability.VECTOR_SEARCH, Capability.BACKUP}
    )

    def __init__(
        self,
        path: Path | str,
        *,
        auto_migrate: bool = True,
        key: str | None = None,
        ann_threshold: int | None = ann.THRESHOLD,
        ann_ef: int = ann.EF_SEARCH,
    ) -> None:
        """``ann_threshold``: vectors in a tenant from which it is searched through a graph
        (``None``: always exact); ``ann_ef``: candidates a graph explores per query."""
        self.path = Path(path).expanduser()
        self.location = str(self.path)
        # Conversations are private: the directory 0700 if new, the file (and WAL) 0600.
        try:
            files.prepare_database(self.path)
        except OSError as exc:  # a directory, a parent that is a file, no permission
            raise StoreError(
                f"cannot open {self.path}: {exc.strerror or exc}", retryable=False
            ) from exc
        self._db = Database(self.path, key)  # key: SQLCipher's passphrase (see cipher.py)
        self._writes = 0
        self._tokenizer = keyword.Tokenizer()
        # An encrypted file gets no graph files beside it (they would hold its vectors in
        # clear): its graphs live in memory, built again by each process.
        graphs_beside = None if key else self.path
        self._vectors = VectorCache(graphs_beside, ann_threshold, reader=self._db.reader, ef=ann_ef)
        self._postings = PostingsCache()
        self.memories = SQLiteMemoryReads(self._db, self._vectors, self._tokenizer, self._postings)
        (
            self.sessions,
            self.jobs,
            self.graph,
            self.chunks,
            self.access,
            self.consolidation,
            self.variables,
            self.schedules,
        ) = shared_reads(self._db, LAYOUTS)
        self.admin = SQLAdminReads(self._db, LAYOUTS.dialect, SQLiteAdmin(self._db))
        with self._db.write_lock:
            if auto_migrate:
                migrate.migrate(self._db.writer)
                with self._db.immediate() as conn:
                    keyword.index_pending(conn, self._tokenizer)
            elif migrate.pending(self._db.writer) or migrate.current_version(self._db.writer) == 0:
                raise StoreError(f"{self.path} needs `omoide migrate`", retryable=False)

    @property
    def _writer(self) -> sqlite3.Connection:
        """The writer connection, for tests that age rows directly (no port does that)."""
        return self._db.writer

    def _reader(self) -> sqlite3.Connection:
        """This thread's reader connection, for tests that inspect rows directly."""
        return self._db.reader()

    @contextmanager
    def transaction(self) -> Iterator[SQLiteTx]:
        with self._db.write_lock:
            with self._db.immediate() as conn:
                tx = transaction_ports(conn, self._tokenizer)
                yield tx
                tx.memories.own.flush()  # the keyword index commits with the memories
            self._writes += 1
            if self._writes % _TRIM_EVERY == 0:
                trim_log(self._db.writer)
                postings.trim_log(self._db.writer)

    def watch_jobs(self, wake: Callable[[], None]) -> Callable[[], None]:  # noqa: ARG002
        return _unwatched  # no cross-process signal on one file: workers poll

    def close(self) -> None:
        self._vectors.close()
        self._db.close()


def _unwatched() -> None:
    return None
