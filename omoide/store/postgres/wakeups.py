"""Job wake-ups across processes: ``LISTEN``/``NOTIFY`` on one channel per schema.

Enqueuing a job runs ``pg_notify`` in the same transaction, so PostgreSQL delivers the
notification when (and only if) the job commits. A watcher holds one connection of its own,
outside the pool, listening on that channel; each notification wakes the local workers, which
otherwise sleep their poll interval. Polling stays the fallback: a notification lost while the
connection is down is covered by the wake-up after reconnecting and by the next poll.

A job put back to ``pending`` for later (a retry's backoff, an LLM outage's deferral) is not
due when its transaction commits, so waking workers then would find nothing. Its notification
carries the delay instead (milliseconds, as text; empty or 0 = due now), and each watcher wakes
its workers once that delay has passed since it received the notification: every process's
workers find the job when it becomes due, not one poll interval (up to a minute) later. The
delay counts from receipt, which follows the commit, so the wake-up is never early on the
writer's clock; a watcher that was down meanwhile misses it, and polling finds the job.
"""

from __future__ import annotations

import contextlib
import heapq
import logging
import threading
import time
from collections.abc import Callable

import psycopg
from psycopg import sql

from omoide.store.postgres.db import Conn, connect
from omoide.store.sql.dialect import Conn as Executes

log = logging.getLogger("omoide.store.postgres")

# The channel of the connection's schema: tests and tenants' schemas on one server stay apart.
CHANNEL_SQL = "'omoide_jobs.' || current_schema()"
RECONNECT_S = 5.0
_POLL_NOTIFIES_S = 0.2  # how often the listening thread looks at its stop flag and due times
_MAX_LATER = 10_000  # wake-ups kept for later; beyond, polling finds those jobs


# ``notify_jobs(conn)`` as an expression, for a statement that announces the job it writes
NOTIFY_NOW_SQL = f"pg_notify({CHANNEL_SQL}, '0')"


def notify_jobs(conn: Executes, delay_ms: int = 0) -> None:
    """Announce a job due in ``delay_ms`` (0: now); delivered on commit of ``conn``'s
    transaction. Equal notifications of one transaction are delivered once."""
    conn.execute(f"SELECT pg_notify({CHANNEL_SQL}, %s)", (str(max(0, delay_ms)),))


def _delay_s(payload: str) -> float:
    """The delay a notification announces; an unreadable one (another version) means now."""
    try:
        return max(0, int(payload or 0)) / 1000
    except ValueError:
        return 0.0


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
        self._later: list[float] = []  # a heap of monotonic times to wake at (this thread's)
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
                    for notify in conn.notifies(timeout=_POLL_NOTIFIES_S):
                        self._received(_delay_s(notify.payload))
                except psycopg.Error as exc:
                    log.warning("job wake-ups: connection lost (%s); reconnecting", exc)
                    self._close()
                self._wake_due()
        finally:
            self._close()

    def _received(self, delay_s: float) -> None:
        if delay_s <= 0:
            self._wake()
        elif len(self._later) < _MAX_LATER:
            heapq.heappush(self._later, time.monotonic() + delay_s)

    def _wake_due(self) -> None:
        """One wake-up for all the jobs that became due since the last look."""
        now, due = time.monotonic(), False
        while self._later and self._later[0] <= now:
            heapq.heappop(self._later)
            due = True
        if due:
            self._wake()

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
