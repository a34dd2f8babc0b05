"""Job wake-ups across processes: ``LISTEN``/``NOTIFY`` on one channel per schema.

Enqueuing a job runs ``pg_notify`` in the same transaction, so PostgreSQL delivers the
notification when (and only if) the job commits. A watcher holds one connection of its own,
outside the pool, listening on that channel; each notification wakes the local workers, which
otherwise sleep their poll interval. Polling stays the fallback: a notification lost while the
connection is down is covered by the wake-up after reconnecting and by the next poll.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable

import psycopg
from psycopg import sql

from omoide.store.postgres.db import Conn, connect

log = logging.getLogger("omoide.store.postgres")

# The channel of the connection's schema: tests and tenants' schemas on one server stay apart.
CHANNEL_SQL = "'omoide_jobs.' || current_schema()"
RECONNECT_S = 5.0
_POLL_NOTIFIES_S = 0.2  # how often the listening thread looks at its stop flag (close waits it)


def notify_jobs(conn: Conn) -> None:
    """Announce a new job; delivered on commit of ``conn``'s transaction."""
    conn.execute(f"SELECT pg_notify({CHANNEL_SQL}, '')")


def _listen(url: str) -> Conn:
    conn = connect(url)
    row = conn.execute(f"SELECT {CHANNEL_SQL} AS channel").fetchone()
    channel = str(row["channel"]) if row else "omoide_jobs.public"
    conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))
    return conn


class JobWatcher:
    """Calls ``wake`` for each job another connection enqueues, until ``stop()``.

    Listening starts before the constructor returns, so a job enqueued afterwards is never
    missed; if the database cannot be reached the watcher retries in its thread."""

    def __init__(self, url: str, wake: Callable[[], None]) -> None:
        self._url = url
        self._wake = wake
        self._stop = threading.Event()
        self._conn: Conn | None = None
        try:
            self._conn = _listen(url)
        except Exception as exc:  # the workers still poll; the thread keeps trying
            log.warning("job wake-ups: cannot listen yet (%s); polling meanwhile", exc)
        self._thread = threading.Thread(target=self._run, name="omoide-job-watch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(RECONNECT_S + _POLL_NOTIFIES_S + 1.0)

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                conn = self._conn
                if conn is None:
                    self._reconnect()
                    continue
                try:
                    for _ in conn.notifies(timeout=_POLL_NOTIFIES_S):
                        self._wake()
                except psycopg.Error as exc:
                    log.warning("job wake-ups: connection lost (%s); reconnecting", exc)
                    self._close()
        finally:
            self._close()

    def _reconnect(self) -> None:
        if self._stop.wait(RECONNECT_S):
            return
        try:
            self._conn = _listen(self._url)
        except Exception as exc:
            log.warning("job wake-ups: cannot listen (%s); retrying", exc)
            return
        self._wake()  # a job may have been enqueued while nobody listened

    def _close(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(psycopg.Error):
                self._conn.close()
            self._conn = None
