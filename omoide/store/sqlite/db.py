"""Connections to one SQLite file: one writer behind a lock, one reader per thread.

SQLite allows one writer at a time; a Python lock in front of the single writer connection is
cheaper than SQLITE_BUSY retries inside one process (other processes wait on ``busy_timeout``).
Each thread gets its own reader connection (``query_only``), so reads run concurrently with
each other and, thanks to WAL, with a write. Every write transaction is ``BEGIN IMMEDIATE``:
it takes the file's write lock up front, so a read inside it never has to be upgraded.
"""

from __future__ import annotations

import sqlite3
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from omoide.errors import StoreError
from omoide.store.sqlite import cipher

BUSY_TIMEOUT_MS = 30_000
_CORRUPT = (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)
_PROGRESS_STEPS = 10_000  # VM steps between checks of a bounded integrity check's clock


def connect(path: Path | str, key: str | None = None) -> sqlite3.Connection:
    """A connection in autocommit mode (we issue BEGIN ourselves), WAL, foreign keys on;
    through SQLCipher when ``key`` (the passphrase) is given (``cipher``)."""
    conn = cipher.open_connection(
        path, key, isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT_MS / 1000
    )
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA synchronous = NORMAL")
    return conn


@contextmanager
def snapshot(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """Several reads on a reader connection that must see one state of the file."""
    conn.execute("BEGIN")
    try:
        yield conn
    finally:
        conn.execute("COMMIT")


class _Reader:
    """A thread's read connection; closed when the thread-local that holds it is collected."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def close(self) -> None:
        self.conn.close()

    def __del__(self) -> None:
        self.conn.close()


class Database:
    """The connections of one SQLite file, shared by every port of a ``SQLiteStore``."""

    def __init__(self, path: Path, key: str | None = None) -> None:
        self.path = path
        self.key = key
        try:
            self.writer = connect(path, key)
            # 64 MB of page cache for the writer (default 2 MB): keyword postings are inserted
            # all over their B-tree, and at 100k memories the default cache thrashed.
            self.writer.execute("PRAGMA cache_size = -65536")
        except cipher.Error as exc:
            raise StoreError(f"cannot open {path}: {exc}", retryable=False) from exc
        self.write_lock = threading.RLock()
        self._local = threading.local()
        # One reader per thread, closed when its thread ends (servers replace idle threads).
        self._readers: weakref.WeakSet[_Reader] = weakref.WeakSet()
        # Problems seen by a failed statement, and the last integrity check's result (None:
        # not run yet, or not finished in its budget). The first check runs on the first
        # health report, not at open: opening never waits and starts no thread.
        self.corruption: list[str] = []
        self.last_check: list[str] | None = None
        self.checked = False

    def reader(self) -> sqlite3.Connection:
        """This thread's read-only connection (opened on first use)."""
        holder: _Reader | None = getattr(self._local, "reader", None)
        if holder is None:
            conn = connect(self.path, self.key)
            conn.execute("PRAGMA query_only = ON")
            holder = _Reader(conn)
            self._local.reader = holder
            self._readers.add(holder)
        return holder.conn

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """This thread's reader inside one snapshot, as PostgreSQL's ``read()``: the shape
        ``store.sql``'s ports read through."""
        with snapshot(self.reader()) as conn:
            yield conn

    def write(self) -> AbstractContextManager[sqlite3.Connection]:
        """``immediate()``, under the name ``store.sql``'s ports write through."""
        return self.immediate()

    @contextmanager
    def immediate(self) -> Iterator[sqlite3.Connection]:
        """The writer inside ``BEGIN IMMEDIATE``: committed on exit, rolled back on error.

        A driver error that escapes (busy past the timeout, disk full, I/O) becomes
        ``StoreError``, retryable when SQLite calls it operational (busy, locked, full).
        """
        with self.write_lock:
            conn = self.writer
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    yield conn
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
            except cipher.Error as exc:
                raise self.error(exc, "write to") from exc

    def error(self, exc: sqlite3.Error, doing: str) -> StoreError:
        """The ``StoreError`` for a driver error: a full disk says so (``disk_full``, HTTP
        507), a corrupt file is remembered for ``/health``; retryable when operational."""
        code = getattr(exc, "sqlite_errorcode", None)
        if code == sqlite3.SQLITE_FULL:
            return StoreError(
                f"{doing} {self.path} failed: the disk (or the database's size limit) is full;"
                " free space and retry, nothing of this request was stored",
                retryable=True,
                disk_full=True,
            )
        if code in _CORRUPT:
            self.corruption.append(f"{doing} {self.path}: {exc}")
        retryable = isinstance(exc, cipher.OperationalError)
        return StoreError(f"{doing} {self.path} failed: {exc}", retryable=retryable)

    def quick_check(self, max_seconds: float) -> list[str] | None:
        """``PRAGMA quick_check`` on a fresh connection, stopped after ``max_seconds`` (None:
        not finished; a large file is checked in full by ``omoide doctor``'s longer budget).
        The problems found, ``[]`` when the file is sound."""
        deadline = time.monotonic() + max_seconds
        try:
            conn = cipher.open_connection(self.path, self.key, isolation_level=None)
        except cipher.Error as exc:
            return [str(exc)]
        except StoreError as exc:  # the key no longer opens it (changed by another process)
            return [str(exc)]
        conn.set_progress_handler(lambda: int(time.monotonic() > deadline), _PROGRESS_STEPS)
        try:
            found = [str(r[0]) for r in conn.execute("PRAGMA quick_check(20)").fetchall()]
        except cipher.OperationalError as exc:
            if "interrupted" in str(exc):
                return None
            return [str(exc)]
        except cipher.DatabaseError as exc:
            return [str(exc)]
        finally:
            conn.close()
        return [] if found == ["ok"] else found

    def close(self) -> None:
        for holder in list(self._readers):
            holder.close()
        with self.write_lock:
            self.writer.close()
