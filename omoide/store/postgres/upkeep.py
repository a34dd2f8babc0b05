"""Maintenance that follows writes, done at write time so that no search ever runs it.

Two chores, each after the writer's transaction committed, in the writer's thread:

- **Folding a tenant's delta rows** (``counts.compact``). Searches read the tenant's counters
  and document frequencies as sums of delta rows; the writes append them. Searches used to fold
  them when they found many, inside the request: right after a bulk load that fold was the
  first search's minutes (issue 35). Now a writer checks its tenant's delta rows every
  ``CHECK_EVERY`` write transactions of that tenant in this process, and at once after a bulk
  write or an import, and folds them past ``counts.COMPACT_AT``. A search's sum thus reads at
  most about ``COMPACT_AT + CHECK_EVERY`` rows per process writing the tenant.
- **Planner statistics after bulk writes** (``ANALYZE``). Autovacuum analyzes a table a while
  after it changed; a search right after a bulk load would be planned without statistics (a
  never-analyzed table) or with those of a table a fraction of its size. After a write of at
  least ``BULK_ROWS`` rows, the touched tables are analyzed when this process wrote as many rows
  since its last ``ANALYZE`` as ``memories`` held then (or it was never analyzed): a doubling
  rule, so a load of n rows costs about log2(n) analyzes, each a bounded sample.
  ``SKIP_LOCKED``: a table being analyzed by autovacuum, or indexed (``CREATE INDEX
  CONCURRENTLY`` holds the same lock), is skipped, never waited for.

Both are best effort: a failure leaves the deltas (their sum is still exact) or the old
statistics, is logged, and the write it followed stays committed.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping

from omoide.errors import StoreError
from omoide.store.postgres import counts
from omoide.store.postgres.db import Database

log = logging.getLogger("omoide.store")

CHECK_EVERY = 8  # write transactions of a tenant between two looks at its delta rows
BULK_ROWS = 200  # rows one transaction writes for it to count as a bulk write
ANALYZE_MIN = 1000  # rows written before the first ANALYZE of a process
# What a search plans over, and the columns its filters and joins read: statistics of the
# texts, tsvectors and vectors would cost most of an ANALYZE and steer no plan of ours.
TABLES = {
    "memories": "user_id, scope_id, id, seq, session_id, type, valid_from, invalid_at,"
    " supersedes, created_at",
    "memory_terms": "user_id, scope_id, lexeme, seq",
    "memory_vectors": "user_id, scope_id, memory_id",
    "lexeme_counts": "user_id, scope_id, lexeme",
    "tenant_counts": "user_id, scope_id",
}
_ANALYZE = "ANALYZE (SKIP_LOCKED) " + ", ".join(f"{t} ({c})" for t, c in TABLES.items())

Tenant = tuple[str, str]


class Upkeep:
    """The chores of one store (one per ``PostgresStore``; thread-safe)."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._lock = threading.Lock()
        self._writes: dict[Tenant, int] = {}  # write transactions since the last look
        self._unanalyzed = 0  # rows written since this process's last ANALYZE

    def after_commit(self, written: Mapping[Tenant, int]) -> None:
        """Called with the rows a committed transaction wrote, by tenant."""
        rows = sum(written.values())
        for tenant in self._due(written):
            self._fold(tenant)
        with self._lock:
            self._unanalyzed += rows
            pending = self._unanalyzed
        if rows >= BULK_ROWS and pending >= ANALYZE_MIN:
            self._analyze_if_stale(pending)

    def _due(self, written: Mapping[Tenant, int]) -> list[Tenant]:
        due = []
        with self._lock:
            for tenant, rows in written.items():
                seen = self._writes.get(tenant, 0) + 1
                if seen >= CHECK_EVERY or rows >= BULK_ROWS:
                    self._writes.pop(tenant, None)
                    due.append(tenant)
                else:
                    self._writes[tenant] = seen
        return due

    def _fold(self, tenant: Tenant) -> None:
        try:
            with self._db.read_one() as conn:
                tally = counts.read(conn, *tenant)
        except StoreError as exc:
            log.warning("reading a tenant's counters failed (%s): not folded now", exc)
            return
        counts.fold_if_needed(self._db, *tenant, tally)

    def _analyze_if_stale(self, pending: int) -> None:
        try:
            with self._db.read_one() as conn:
                row = conn.execute(
                    "SELECT reltuples FROM pg_class WHERE oid = 'memories'::regclass"
                ).fetchone()
                known = float(row["reltuples"]) if row else -1.0
                if known >= 0 and pending < max(known, ANALYZE_MIN):
                    return
                conn.execute(_ANALYZE)
        except StoreError as exc:
            log.warning("ANALYZE after a bulk write failed (%s): statistics stay", exc)
            return
        with self._lock:
            self._unanalyzed = max(0, self._unanalyzed - pending)
