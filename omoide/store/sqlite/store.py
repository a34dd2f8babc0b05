"""The embedded SQLite store: one file, WAL, FTS5 keyword search, an exact vector cache.

Connections: one writer connection behind a lock (SQLite allows one writer; a Python lock is
cheaper than SQLITE_BUSY retries), and one reader connection per thread, so reads run
concurrently with each other and with a write (WAL). Every ``transaction()`` is BEGIN IMMEDIATE.
"""

from __future__ import annotations

import sqlite3
import threading
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from omoide.errors import InvalidInput, NotFound, StoreError
from omoide.store.protocol import Capability
from omoide.store.sqlite import fts, migrate, rows
from omoide.store.sqlite.consolidation import ConsolidationStoreMixin
from omoide.store.sqlite.graph import GraphStoreMixin
from omoide.store.sqlite.jobs import JobsMixin
from omoide.store.sqlite.ledger import LedgerStoreMixin
from omoide.store.sqlite.projects import ProjectsStoreMixin
from omoide.store.sqlite.traverse import TraverseStoreMixin
from omoide.store.sqlite.tx import SQLiteTx
from omoide.store.sqlite.vectors import VectorCache, trim_log
from omoide.types import (
    Episode,
    HistoryEntry,
    Job,
    MemoryItem,
    Scope,
    SearchFilters,
    Session,
)

BUSY_TIMEOUT_MS = 30_000


def connect(path: Path | str) -> sqlite3.Connection:
    conn = sqlite3.connect(
        str(path), isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT_MS / 1000
    )
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA synchronous = NORMAL")
    return conn


class _Reader:
    """A thread's read connection; closed when the thread-local that holds it is collected."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def close(self) -> None:
        self.conn.close()

    def __del__(self) -> None:
        self.conn.close()


class SQLiteStore(
    JobsMixin,
    GraphStoreMixin,
    TraverseStoreMixin,
    LedgerStoreMixin,
    ConsolidationStoreMixin,
    ProjectsStoreMixin,
):
    """A ``Store`` on one SQLite file. ``auto_migrate=False`` refuses an outdated schema."""

    capabilities = frozenset(
        {Capability.KEYWORD_SEARCH, Capability.VECTOR_SEARCH, Capability.BACKUP}
    )

    def __init__(self, path: Path | str, *, auto_migrate: bool = True) -> None:
        self.path = Path(path).expanduser()
        self.location = str(self.path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._writer = connect(self.path)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open {self.path}: {exc}", retryable=False) from exc
        self._write_lock = threading.RLock()
        self._local = threading.local()
        # One reader per thread, closed when its thread ends (servers replace idle threads).
        self._readers: weakref.WeakSet[_Reader] = weakref.WeakSet()
        self._vectors = VectorCache()
        self._terms = fts.TermFilter()
        self._writes = 0
        # Each port is this object until the ports are split into their own classes.
        self.memories = self.sessions = self.jobs = self.graph = self
        self.ledger = self.variables = self.admin = self
        with self._write_lock:
            if auto_migrate:
                migrate.migrate(self._writer)
            elif migrate.pending(self._writer) or migrate.current_version(self._writer) == 0:
                raise StoreError(f"{self.path} needs `omoide migrate`", retryable=False)

    # connections ------------------------------------------------------------------------
    def _reader(self) -> sqlite3.Connection:
        holder = getattr(self._local, "reader", None)
        if holder is None:
            conn = connect(self.path)
            conn.execute("PRAGMA query_only = ON")
            holder = _Reader(conn)
            self._local.reader = holder
            self._readers.add(holder)
        return holder.conn

    @contextmanager
    def transaction(self) -> Iterator[SQLiteTx]:
        with self._write_lock:
            conn = self._writer
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield SQLiteTx(conn)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            self._writes += 1
            if self._writes % 10_000 == 0:
                trim_log(conn)

    def close(self) -> None:
        for holder in list(self._readers):
            holder.close()
        with self._write_lock:
            self._writer.close()

    def schema_version(self) -> int:
        return migrate.current_version(self._reader())

    def get_meta(self, key: str) -> str | None:
        row = self._reader().execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    # memories ---------------------------------------------------------------------------
    def get_memories(self, scope: Scope, ids: Sequence[str]) -> list[MemoryItem]:
        if not ids:
            return []
        conn = self._reader()
        found: dict[str, MemoryItem] = {}
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            cursor = conn.execute(
                f"SELECT {rows.MEMORY_COLUMNS} FROM {rows.MEMORY_FROM} WHERE +m.user_id = ?"
                f" AND +m.scope_id = ? AND m.id IN ({marks})",
                (scope.user_id, scope.scope_id, *chunk),
            )
            for row in cursor:
                found[row["id"]] = rows.memory_from_row(row)
        return [found[i] for i in ids if i in found]

    def list_memories(
        self, scope: Scope, filters: SearchFilters, limit: int, offset: int
    ) -> tuple[list[MemoryItem], int]:
        conn = self._reader()
        where, params = rows.memory_filter(conn, scope, filters)
        conn.execute("BEGIN")  # the page and its total from one snapshot
        try:
            total = conn.execute(f"SELECT count(*) FROM memories m WHERE {where}", params)
            total_count = int(total.fetchone()[0])
            cursor = conn.execute(
                f"SELECT {rows.MEMORY_COLUMNS} FROM {rows.MEMORY_FROM} WHERE {where}"
                " ORDER BY m.created_at DESC, m.seq DESC LIMIT ? OFFSET ?",
                (*params, limit, offset),
            )
            items = [rows.memory_from_row(r) for r in cursor]
        finally:
            conn.execute("COMMIT")
        return items, total_count

    def latest_memories(self, scope: Scope, filters: SearchFilters, limit: int) -> list[MemoryItem]:
        """``list_memories`` without the total: the newest ``limit`` matches."""
        conn = self._reader()
        where, params = rows.memory_filter(conn, scope, filters)
        cursor = conn.execute(
            f"SELECT {rows.MEMORY_COLUMNS} FROM {rows.MEMORY_FROM} WHERE {where}"
            " ORDER BY m.created_at DESC, m.seq DESC LIMIT ?",
            (*params, limit),
        )
        return [rows.memory_from_row(r) for r in cursor]

    def keyword_search(
        self, scope: Scope, terms: Sequence[str], filters: SearchFilters, limit: int
    ) -> list[tuple[str, float]]:
        if not terms:
            return []
        conn = self._reader()
        where, params = rows.memory_filter(conn, scope, filters)
        match = fts.match_expression(self._terms.selective(conn, terms), rows.tenant_token(scope))
        try:
            cursor = conn.execute(
                "SELECT m.id, bm25(memories_fts, 1.0, 0.4, 0.0) AS rank FROM memories_fts"
                " JOIN memories m ON m.seq = memories_fts.rowid"
                f" WHERE memories_fts MATCH ? AND {where} ORDER BY rank LIMIT ?",
                (match, *params, limit),
            )
            return [(r["id"], -float(r["rank"])) for r in cursor]
        except sqlite3.OperationalError as exc:
            raise InvalidInput(f"keyword query rejected: {exc}") from exc

    def vector_search(
        self, scope: Scope, vector: np.ndarray, filters: SearchFilters, limit: int
    ) -> list[tuple[str, float]]:
        conn = self._reader()
        tenant = rows.tenant_key(scope)
        # Over-fetch a little for rows the filters drop (superseded, other types...), and widen
        # the scan only when that was not enough.
        fetch = limit + 20
        while True:
            candidates, size = self._vectors.top_k(conn, tenant, vector, fetch)
            kept = self._filter_seqs(conn, scope, filters, candidates)
            if len(kept) >= limit or fetch >= size:
                return kept[:limit]
            fetch = min(size, fetch * 8)

    def _filter_seqs(
        self,
        conn: sqlite3.Connection,
        scope: Scope,
        filters: SearchFilters,
        candidates: list[tuple[int, float]],
    ) -> list[tuple[str, float]]:
        if not candidates:
            return []
        where, params = rows.memory_filter(conn, scope, filters, by_key=True)
        allowed: dict[int, str] = {}
        seqs = [s for s, _ in candidates]
        for start in range(0, len(seqs), 500):
            chunk = seqs[start : start + 500]
            marks = ",".join("?" * len(chunk))
            cursor = conn.execute(
                f"SELECT m.seq, m.id FROM memories m WHERE m.seq IN ({marks}) AND {where}",
                (*chunk, *params),
            )
            allowed.update((int(r[0]), r[1]) for r in cursor)
        return [(allowed[s], score) for s, score in candidates if s in allowed]

    def history(self, scope: Scope, memory_id: str) -> list[HistoryEntry]:
        scope_args = (scope.user_id, scope.scope_id)
        # A fact's versions (linked by ``supersedes``) share one history, oldest first.
        cursor = self._reader().execute(
            "WITH RECURSIVE"
            " older(id) AS (SELECT ? UNION SELECT m.supersedes FROM memories m JOIN older o"
            "  ON m.id = o.id WHERE m.supersedes IS NOT NULL AND m.user_id = ? AND m.scope_id = ?),"
            " newer(id) AS (SELECT ? UNION SELECT m.id FROM memories m JOIN newer n"
            "  ON m.supersedes = n.id WHERE m.user_id = ? AND m.scope_id = ?)"
            " SELECT * FROM history WHERE memory_id IN (SELECT id FROM older UNION"
            " SELECT id FROM newer) AND user_id = ? AND scope_id = ? ORDER BY id",
            (memory_id, *scope_args, memory_id, *scope_args, *scope_args),
        )
        entries = [rows.history_from_row(r) for r in cursor]
        if not entries:
            raise NotFound(f"memory {memory_id!r} not found", id=memory_id)
        return entries

    # sessions and episodes ----------------------------------------------------------------
    def get_session(self, scope: Scope, session_id: str) -> Session:
        row = (
            self._reader()
            .execute(
                rows.SESSION_SELECT
                + " WHERE s.user_id = ? AND s.scope_id = ? AND s.external_id = ?",
                (scope.user_id, scope.scope_id, session_id),
            )
            .fetchone()
        )
        if row is None:
            raise NotFound(f"session {session_id!r} not found", id=session_id)
        return rows.session_from_row(row)

    def list_sessions(self, scope: Scope, limit: int, offset: int) -> tuple[list[Session], int]:
        conn = self._reader()
        args = (scope.user_id, scope.scope_id)
        total = conn.execute(
            "SELECT count(*) FROM sessions WHERE user_id = ? AND scope_id = ?", args
        ).fetchone()[0]
        cursor = conn.execute(
            rows.SESSION_SELECT + " WHERE s.user_id = ? AND s.scope_id = ?"
            " ORDER BY s.created_at DESC, s.id DESC LIMIT ? OFFSET ?",
            (*args, limit, offset),
        )
        return [rows.session_from_row(r) for r in cursor], int(total)

    def get_episode(self, scope: Scope, episode_id: str) -> Episode:
        row = (
            self._reader()
            .execute(
                "SELECT e.*, s.external_id AS session_ext FROM episodes e"
                " JOIN sessions s ON s.id = e.session_id"
                " WHERE e.id = ? AND e.user_id = ? AND e.scope_id = ?",
                (episode_id, scope.user_id, scope.scope_id),
            )
            .fetchone()
        )
        if row is None:
            raise NotFound(f"episode {episode_id!r} not found", id=episode_id)
        return rows.episode_from_row(row, row["session_ext"])

    def list_episodes(
        self, scope: Scope, session_id: str, limit: int, offset: int
    ) -> tuple[list[Episode], int]:
        conn = self._reader()
        session = self.get_session(scope, session_id)
        pk = conn.execute(
            "SELECT id FROM sessions WHERE user_id = ? AND scope_id = ? AND external_id = ?",
            (scope.user_id, scope.scope_id, session.id),
        ).fetchone()[0]
        total = conn.execute("SELECT count(*) FROM episodes WHERE session_id = ?", (pk,))
        cursor = conn.execute(
            "SELECT * FROM episodes WHERE session_id = ? ORDER BY created_at, rowid"
            " LIMIT ? OFFSET ?",
            (pk, limit, offset),
        )
        return [rows.episode_from_row(r, session_id) for r in cursor], int(total.fetchone()[0])

    # jobs -----------------------------------------------------------------------------
    def get_job(self, job_id: int) -> Job:
        row = self._reader().execute("SELECT * FROM jobs WHERE id = ?", (job_id,)).fetchone()
        if row is None:
            raise NotFound(f"job {job_id} not found", id=job_id)
        return rows.job_from_row(row)

    def job_steps(self, job_id: int) -> dict[str, dict[str, Any]]:
        """The recorded steps of a job: ``{step: {status, detail, calls, ...tokens}}``."""
        cursor = self._reader().execute(
            "SELECT step, status, detail, calls, prompt_tokens, completion_tokens FROM job_steps"
            " WHERE job_id = ? ORDER BY created_at",
            (job_id,),
        )
        return {r["step"]: {k: v for k, v in dict(r).items() if k != "step"} for r in cursor}

    # maintenance ----------------------------------------------------------------------
    def iter_memory_texts(self, batch: int) -> Iterator[list[tuple[Scope, str, str]]]:
        last = 0
        conn = self._reader()
        while True:
            cursor = conn.execute(
                "SELECT seq, id, user_id, scope_id, text FROM memories WHERE seq > ?"
                " ORDER BY seq LIMIT ?",
                (last, batch),
            )
            chunk = cursor.fetchall()
            if not chunk:
                return
            last = int(chunk[-1]["seq"])
            yield [
                (Scope(user_id=r["user_id"], scope_id=r["scope_id"]), r["id"], r["text"])
                for r in chunk
            ]

    def stats(self) -> dict[str, int]:
        conn = self._reader()
        out = {}
        tables = ("memories", "memory_vectors", "sessions", "episodes", "history", "jobs")
        for table in (*tables, "entities", "relationships", "variables"):
            out[table] = int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
        out["memories_fts"] = int(
            conn.execute("SELECT count(*) FROM memories_fts_docsize").fetchone()[0]
        )
        return out

    def backup(self, dest: Path) -> None:
        """A complete single-file snapshot, safe while other processes write (VACUUM INTO)."""
        dest = Path(dest).expanduser()
        if dest.exists():
            raise InvalidInput(f"{dest} already exists; choose a new path")
        dest.parent.mkdir(parents=True, exist_ok=True)
        conn = connect(self.path)
        try:
            conn.execute("VACUUM INTO ?", (str(dest),))
        finally:
            conn.close()
