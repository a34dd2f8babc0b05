"""Connections to one PostgreSQL database: a pool, read calls and write transactions.

Reads outside a transaction take a pooled connection for one call and run in one
``REPEATABLE READ READ ONLY`` transaction, so a page and its total (or a graph walk and its
nodes) come from one snapshot; a read of one statement (``read_one``: the searches, the
lookups of hits) runs it alone in autocommit, where the statement is its own snapshot, so
it costs one round trip instead of three (``BEGIN``, the statement, ``COMMIT``). A read of
several statements that depend on each other's results in one snapshot (``snapshot``: the
keyword search over the in-process posting lists) sends its ``BEGIN`` with its first
statement and its ``COMMIT`` with its last, in pipelines. Write
transactions run at ``READ COMMITTED``, like most PostgreSQL applications; the ports take row
locks (``FOR UPDATE``) where SQLite relied on its single writer, so the re-checks of
chunking, superseding and step claims stay race-free.

A write transaction's ``BEGIN``, and a change of the statement timeout between a search and
another use, are not round trips of their own: they are held back and sent in one pipeline
with the next statement (``_Connection``), whose results and errors come back from that
statement's ``execute`` as before. A write that ran no statement sends neither ``BEGIN`` nor
``COMMIT``.
"""

from __future__ import annotations

import contextlib
import re
import select
import threading
import weakref
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, Self, cast
from urllib.parse import urlsplit, urlunsplit

import psycopg
from pgvector.psycopg import register_vector
from psycopg.abc import Params, Query, QueryNoTemplate
from psycopg.rows import DictRow, dict_row
from psycopg_pool import ConnectionPool, PoolTimeout

from omoide.errors import InvalidInput, StoreError
from omoide.redact import redact

Conn = psycopg.Connection[DictRow]

# SQLAlchemy spellings name a driver (``postgresql+psycopg://``); psycopg wants the plain scheme.
_DRIVER = re.compile(r"^postgres(?:ql)?(\+[a-z0-9_]+)?://", re.IGNORECASE)


def is_postgres_url(location: str) -> bool:
    return bool(_DRIVER.match(location.strip()))


def conninfo(url: str) -> str:
    """``url`` with any ``+driver`` suffix of its scheme removed."""
    return _DRIVER.sub("postgresql://", url.strip(), count=1)


def redacted(url: str) -> str:
    """``url`` without its password, for ``Store.location`` and messages."""
    try:
        parts = urlsplit(conninfo(url))
    except ValueError:  # unreadable (an unclosed IPv6 "["): the masking must not fail too
        return redact(conninfo(url))
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


class _Connection(psycopg.Connection[DictRow]):
    """A pooled connection (autocommit) that holds commands back until its next statement,
    which sends them in one pipeline with it (``_Cursor``): a write transaction's ``BEGIN``,
    a change of the statement timeout. Anything else that needs them sent first (a savepoint,
    a pipeline, a batch) sends them on their own."""

    held: tuple[bytes, ...] = ()

    def send_held(self) -> None:
        """Send the held commands, if any."""
        held, self.held = self.held, ()
        if held:
            with super().pipeline():
                for command in held:
                    super().execute(command)

    @contextmanager
    def transaction(
        self, savepoint_name: str | None = None, force_rollback: bool = False
    ) -> Iterator[psycopg.Transaction]:
        self.send_held()  # inside a held BEGIN's transaction this is a savepoint
        with super().transaction(savepoint_name, force_rollback) as tx:
            yield tx

    @contextmanager
    def pipeline(self) -> Iterator[psycopg.Pipeline]:
        """A pipeline whose first commands are the held ones: the block's statements, queued
        behind them, travel in one round trip with them when the block fetches nothing before
        its end (each fetch inside the block waits for the server)."""
        held, self.held = self.held, ()
        with super().pipeline() as pipeline:
            for command in held:
                super().execute(command)
            yield pipeline


class _Cursor(psycopg.Cursor[DictRow]):
    """Sends its connection's held commands in one pipeline with its statement: one round
    trip; the statement's results, row count and errors are there when ``execute`` returns."""

    def execute(
        self,
        query: Query,
        params: Params | None = None,
        *,
        prepare: bool | None = None,
        binary: bool | None = None,
    ) -> Self:
        # one signature for both of the parent's overloads (a template takes no parameters,
        # which the parent checks): the statement goes on unchanged
        statement = cast("QueryNoTemplate", query)
        conn = self.connection
        held = conn.held if isinstance(conn, _Connection) else ()
        if not held or not isinstance(conn, _Connection):
            return super().execute(statement, params, prepare=prepare, binary=binary)
        conn.held = ()
        with psycopg.Connection.pipeline(conn):
            for command in held:
                conn.execute(command)
            super().execute(statement, params, prepare=prepare, binary=binary)
        return self

    def executemany(
        self,
        query: Query,
        params_seq: Iterable[Params],
        *,
        returning: bool = False,
    ) -> None:
        if isinstance(self.connection, _Connection):
            self.connection.send_held()
        super().executemany(query, params_seq, returning=returning)


def _begin(isolation: psycopg.IsolationLevel | None) -> bytes:
    if isolation is None:
        return b"BEGIN"
    return b"BEGIN ISOLATION LEVEL " + isolation.name.replace("_", " ").encode()


def _configure(conn: psycopg.Connection[Any]) -> None:
    register_vector(conn)


@contextmanager
def _settings_reset(conn: Conn) -> Iterator[None]:
    """Back to plain ``BEGIN`` (``READ COMMITTED``, read-write) when the block ends, before
    the connection goes back to the pool, so a write transaction never inherits a read's
    settings. Done here rather than by the pool's ``reset`` callback: a pool with one hands
    every returned connection to its worker thread (a thread wake-up per statement, and the
    connection out of reach until that thread runs); without one it takes it back at once.
    A connection that cannot be reset (broken mid-transaction) is closed: the pool discards
    it."""
    try:
        yield
    finally:
        try:
            conn.isolation_level = None
            conn.read_only = None
        except psycopg.Error:
            conn.close()


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
        # connections whose session runs under the search timeout now, and those whose last
        # change of it may not have taken (not sent, or rolled back with a failed statement)
        self._timed: weakref.WeakSet[Conn] = weakref.WeakSet()
        self._unsure: weakref.WeakSet[Conn] = weakref.WeakSet()
        self.pool: ConnectionPool[Conn] = ConnectionPool(
            self.url,
            min_size=min_size,
            max_size=max_size,
            kwargs={"row_factory": dict_row, "autocommit": True, "cursor_factory": _Cursor},
            connection_class=_Connection,
            configure=_configure,
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
        with (
            _translated(),
            self.pool.connection() as conn,
            self._holding(conn, search),
            _settings_reset(conn),
        ):
            # set on the connection, the BEGIN itself carries them: one round trip less than
            # a SET TRANSACTION after it (``_settings_reset`` clears them again)
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
        with _translated(), self.pool.connection() as conn, self._holding(conn, search):
            yield conn

    @contextmanager
    def snapshot(self, *, search: bool = False) -> Iterator[Conn]:
        """A pooled connection inside one ``REPEATABLE READ READ ONLY`` transaction, for reads
        of several statements that must see one snapshot and may depend on each other's
        results. Its ``BEGIN`` goes with the first statement (as a write's does), and its
        ``COMMIT`` may go with the last: a block whose last pipeline ends with ``COMMIT``
        sends nothing more; otherwise the exit commits. ``search``: under the search
        timeout."""
        self._check_open()
        begin = _begin(psycopg.IsolationLevel.REPEATABLE_READ) + b" READ ONLY"
        with (
            _translated(),
            self.pool.connection() as conn,
            self._holding(conn, search, begin),
            _ended(conn),
        ):
            yield conn

    @contextmanager
    def write(self, isolation: psycopg.IsolationLevel | None = None) -> Iterator[Conn]:
        """A pooled connection inside one read-write transaction: committed on a normal exit,
        rolled back when the block raises. ``isolation`` overrides the server's default
        level. The ``BEGIN`` goes with the first statement (``_Connection``)."""
        self._check_open()
        with (
            _translated(),
            self.pool.connection() as conn,
            self._holding(conn, False, _begin(isolation)),
            _ended(conn),
        ):
            yield conn

    @contextmanager
    def _holding(self, conn: Conn, search: bool, *then: bytes) -> Iterator[None]:
        """Hold the change of the session's statement timeout this use needs (the search
        timeout, or back to the session's default), then ``then``, for the next statement.
        A change not sent, or sent with a block that failed (a rollback undoes it), leaves the
        connection's setting unsure: the next use sends its own."""
        held = _connection(conn)
        change = self._timeout_change(conn, search)
        held.held = (*([change] if change else []), *then)
        failed = True
        try:
            yield
            failed = False
        finally:
            if change is not None and (failed or change in held.held):
                self._unsure.add(conn)
            held.held = ()

    def _timeout_change(self, conn: Conn, search: bool) -> bytes | None:
        """The command that puts ``conn`` under the search timeout or back to the session's
        default, as this use needs, or None if it is there already (outside any transaction,
        so a later rollback keeps it)."""
        if conn not in self._unsure and search == (conn in self._timed):
            return None
        self._unsure.discard(conn)
        if search:
            self._timed.add(conn)
            return f"SET statement_timeout = {self._search_ms}".encode()
        self._timed.discard(conn)
        return b"RESET statement_timeout"

    def _check_open(self) -> None:
        if self._closed.is_set():
            raise StoreError("the store is closed", retryable=False)

    def close(self) -> None:
        if not self._closed.is_set():
            self._closed.set()
            self.pool.close()


def _connection(conn: Conn) -> _Connection:
    if not isinstance(conn, _Connection):  # pragma: no cover - the pool's class
        raise TypeError(f"unexpected connection class {type(conn).__name__}")
    return conn


@contextmanager
def _ended(conn: Conn) -> Iterator[None]:
    """The block's transaction ends with the block: rolled back when it raises, else
    committed. A ``BEGIN`` still held was never sent (no statement ran): it is dropped, and
    the commit then sends nothing, as it sends nothing when the block's last pipeline
    already ended with ``COMMIT``."""
    try:
        yield
    except BaseException:
        _connection(conn).held = ()
        _rollback(conn)
        raise
    _connection(conn).held = ()
    conn.commit()


def _rollback(conn: Conn) -> None:
    """Roll back what the failed block began, without hiding its error: a connection too
    broken to roll back is discarded by the pool (its transaction state says so)."""
    if conn.closed:
        return
    with contextlib.suppress(psycopg.Error):
        conn.rollback()


def connect(url: str) -> Conn:
    """One connection outside any pool, in autocommit (migrations, backups, status checks)."""
    try:
        return psycopg.connect(conninfo(url), row_factory=dict_row, autocommit=True)
    except psycopg.Error as exc:
        raise StoreError(f"cannot connect to {redacted(url)}: {exc}", retryable=True) from exc
