"""Connections to one PostgreSQL database: a pool, read calls and write transactions.

Reads outside a transaction take a pooled connection for one call and run in one
``REPEATABLE READ READ ONLY`` transaction, so a page and its total (or a graph walk and its
nodes) come from one snapshot; a read of one statement (``read_one``: the searches, the
lookups of hits) runs it alone in autocommit, where the statement is its own snapshot, so
it costs one round trip instead of three (``BEGIN``, the statement, ``COMMIT``). Write
transactions run at ``READ COMMITTED``, like most PostgreSQL applications; the ports take row
locks (``FOR UPDATE``) where SQLite relied on its single writer, so the re-checks of
chunking, superseding and step claims stay race-free.
"""

from __future__ import annotations

import re
import select
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
from pgvector.psycopg import register_vector
from psycopg.rows import DictRow, dict_row
from psycopg_pool import ConnectionPool, PoolTimeout

from omoide.errors import InvalidInput, StoreError

Conn = psycopg.Connection[DictRow]

# SQLAlchemy spellings (JiuwenMemory's DB_URL) name a driver; psycopg wants the plain scheme.
_DRIVER = re.compile(r"^postgres(?:ql)?(\+[a-z0-9_]+)?://", re.IGNORECASE)


def is_postgres_url(location: str) -> bool:
    return bool(_DRIVER.match(location.strip()))


def conninfo(url: str) -> str:
    """``url`` with any ``+driver`` suffix of its scheme removed."""
    return _DRIVER.sub("postgresql://", url.strip(), count=1)


def redacted(url: str) -> str:
    """``url`` without its password, for ``Store.location`` and messages."""
    parts = urlsplit(conninfo(url))
    netloc = parts.netloc
    if "@" in netloc:
        auth, host = netloc.rsplit("@", 1)
        netloc = f"{auth.split(':', 1)[0]}@{host}"
    return urlunsplit(parts._replace(netloc=netloc))


@contextmanager
def _translated() -> Iterator[None]:
    """Driver errors as the store's errors: a value PostgreSQL cannot hold (a NUL character in
    text) is ``InvalidInput``; a statement cancelled (the search timeout), a lost connection,
    a full pool, a deadlock or a serialization failure is a retryable ``StoreError``.
    Our own errors (``NotFound``...) pass through."""
    try:
        yield
    except psycopg.DataError as exc:
        raise InvalidInput(f"the database refused a value: {exc}") from exc
    except psycopg.errors.QueryCanceled as exc:  # a search over its timeout, most often
        raise StoreError(f"the database cancelled a statement: {exc}", retryable=True) from exc
    except (psycopg.OperationalError, PoolTimeout) as exc:
        raise StoreError(f"database unavailable: {exc}", retryable=True) from exc
    except psycopg.Error as exc:
        raise StoreError(f"database error: {exc}", retryable=False) from exc


def _configure(conn: psycopg.Connection[Any]) -> None:
    register_vector(conn)


def _reset(conn: psycopg.Connection[Any]) -> None:
    """Back to plain ``BEGIN`` (``READ COMMITTED``, read-write) when a read returns its
    connection, so a write transaction never inherits the read's settings."""
    conn.isolation_level = None
    conn.read_only = None


def _check(conn: psycopg.Connection[Any]) -> None:
    """The pool's liveness check, without a round trip while the connection is quiet: an
    idle connection's socket has nothing to read unless the server closed it (a restart, an
    administrator's terminate: its last message, then end of file). Only then is the usual
    empty query sent, which raises if it is dead, so the pool opens another."""
    if conn.closed:
        raise psycopg.OperationalError("the connection is closed")
    if _readable(conn.fileno()):
        ConnectionPool.check_connection(conn)


def _readable(fd: int) -> bool:
    """Whether ``fd`` has something to read now. ``poll`` where there is one: ``select`` fails
    on descriptors above FD_SETSIZE (1024), which a busy server's sockets reach."""
    if hasattr(select, "poll"):
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        return bool(poller.poll(0))
    readable, _, _ = select.select([fd], [], [], 0)  # pragma: no cover - Windows
    return bool(readable)


SEARCH_TIMEOUT = 10.0  # seconds a search statement may run before it fails (a setting)


class Database:
    """The pool of one database, shared by every port of a ``PostgresStore``.

    Search statements (``search``) run under ``statement_timeout`` = ``search_timeout``
    seconds: a plan that went wrong fails the request with a ``StoreError`` instead of holding
    a connection and a core for minutes. Other statements keep the session's own setting
    (the URL's, the role's, or none): exports and bulk writes may rightly take long. The
    setting is per session, so it is sent only when a connection changes from one kind of
    use to the other, not on every search."""

    def __init__(
        self,
        url: str,
        *,
        min_size: int = 1,
        max_size: int = 10,
        search_timeout: float = SEARCH_TIMEOUT,
    ) -> None:
        """Open the pool. The schema must exist already (migrate first): each new connection
        looks up the ``vector`` type."""
        self.url = conninfo(url)
        self.location = redacted(url)
        self._closed = threading.Event()
        self._search_ms = max(1, round(search_timeout * 1000))
        # connections whose session runs under the search timeout now
        self._timed: weakref.WeakSet[Conn] = weakref.WeakSet()
        self.pool: ConnectionPool[Conn] = ConnectionPool(
            self.url,
            min_size=min_size,
            max_size=max_size,
            kwargs={"row_factory": dict_row, "autocommit": True},
            configure=_configure,
            reset=_reset,
            check=_check,  # a server restart costs no failed request
            open=False,
            name="omoide",
        )
        try:
            self.pool.open(wait=True, timeout=30)
        except Exception as exc:  # a bad URL, a server that is down, a missing extension
            self.pool.close()
            raise StoreError(f"cannot open {self.location}: {exc}", retryable=True) from exc

    @contextmanager
    def read(self, *, search: bool = False) -> Iterator[Conn]:
        """A pooled connection inside one read-only snapshot transaction (``search``: under
        the search timeout)."""
        self._check_open()
        with _translated(), self.pool.connection() as conn:
            self._time(conn, search)
            # set on the connection, the BEGIN itself carries them: one round trip less than
            # a SET TRANSACTION after it (the pool's reset clears them again)
            conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
            conn.read_only = True
            with conn.transaction():
                yield conn

    @contextmanager
    def read_one(self, *, search: bool = False) -> Iterator[Conn]:
        """A pooled connection in autocommit, for a read of ONE statement: a statement is its
        own snapshot, so it sees what a ``read()`` transaction would, without the ``BEGIN``
        and ``COMMIT`` round trips. Several statements here would see several snapshots.
        ``search``: under the search timeout."""
        self._check_open()
        with _translated(), self.pool.connection() as conn:
            self._time(conn, search)
            yield conn

    @contextmanager
    def write(self, isolation: psycopg.IsolationLevel | None = None) -> Iterator[Conn]:
        """A pooled connection inside one read-write transaction: committed on a normal exit,
        rolled back when the block raises. ``isolation`` overrides the server's default
        level (the pool's reset clears it again)."""
        self._check_open()
        with _translated(), self.pool.connection() as conn:
            self._time(conn, False)
            conn.isolation_level = isolation
            with conn.transaction():
                yield conn

    def _time(self, conn: Conn, search: bool) -> None:
        """The session's statement timeout for this use, set outside any transaction (so a
        rollback keeps it): the search timeout, or back to the session's default."""
        if search == (conn in self._timed):
            return
        if search:
            conn.execute(f"SET statement_timeout = {self._search_ms}")
            self._timed.add(conn)
        else:
            conn.execute("RESET statement_timeout")
            self._timed.discard(conn)

    def _check_open(self) -> None:
        if self._closed.is_set():
            raise StoreError("the store is closed", retryable=False)

    def close(self) -> None:
        if not self._closed.is_set():
            self._closed.set()
            self.pool.close()


def connect(url: str) -> Conn:
    """One connection outside any pool, in autocommit (migrations, backups, status checks)."""
    try:
        return psycopg.connect(conninfo(url), row_factory=dict_row, autocommit=True)
    except psycopg.Error as exc:
        raise StoreError(f"cannot connect to {redacted(url)}: {exc}", retryable=True) from exc
