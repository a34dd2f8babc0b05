"""The storage seam: what the engine needs from a backend, split into ports by aggregate.

A backend implements ``Store``: one read port per aggregate (``store.memories``,
``store.sessions`` ...) and ``transaction()``, which hands out a ``Tx`` with one write port per
aggregate. ``tests/store/`` is the executable definition of these ports: every port method has
a contract test there (``tests/store/test_port_coverage.py`` keeps it so). Each port method's
docstring gives its tenant rule, its errors and its concurrency contract.

Rules every backend keeps:

* Tenancy. Every tenant method takes the tenant ``Scope`` and never reads or writes another
  tenant's rows; another tenant's id behaves as one that does not exist (``NotFound``). The
  few global methods (job ids, reindex iterators, admin) say so.
* Atomicity. Everything written through one ``Tx`` commits together or not at all, so a
  memory, its full-text row, its vector or embed job, and its history are never split. An
  exception inside ``with store.transaction()`` rolls it all back.
* Isolation. Write transactions are serialised: a ``Tx`` reads the state as of its start plus
  its own writes, and no other writer commits in between (SQLite: one writer, ``BEGIN
  IMMEDIATE``). The optimistic re-checks the engine makes (chunk cursor, consolidation plan,
  ``claim_step``, superseding a still-valid memory) rely on that; a backend with weaker
  isolation (PostgreSQL's READ COMMITTED) must use SERIALIZABLE or lock the rows re-checked.
* Reads outside a transaction see committed data only; a method that returns a page and a
  total reads both from one snapshot. A read never blocks on a writer.
* Errors come from ``omoide.errors``: ``NotFound``, ``Conflict``, ``InvalidInput``,
  ``StoreError``/``MigrationError``; nothing backend-specific escapes the documented cases.
* Do not nest ``transaction()`` on one thread, and do not call ``JobQueue``'s own-transaction
  methods (claim, fail, retry) inside one.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from enum import StrEnum
from typing import Protocol

from omoide.store.ports.access import AccessReads, AccessWrites, TenantActivity
from omoide.store.ports.admin import AdminReads, AdminWrites
from omoide.store.ports.chunks import ChunkCursor, ChunkReads, ChunkWrites, NewChunk, SessionMessage
from omoide.store.ports.consolidation import (
    ConsolidationPlan,
    ConsolidationReads,
    ConsolidationWrites,
    EpisodeStat,
)
from omoide.store.ports.graph import GraphReads, GraphWrites
from omoide.store.ports.jobs import JobQueue, JobWrites
from omoide.store.ports.memories import (
    LatestTurn,
    MemoryReads,
    MemoryWrites,
    Neighbour,
    NewMemory,
    Said,
)
from omoide.store.ports.schedules import Schedule, ScheduleReads, ScheduleWrites
from omoide.store.ports.sessions import SessionPatch, SessionReads, SessionWrites
from omoide.store.ports.variables import VariableReads, VariableWrites

__all__ = [
    "Capability",
    "ChunkCursor",
    "ConsolidationPlan",
    "EpisodeStat",
    "LatestTurn",
    "Neighbour",
    "NewChunk",
    "NewMemory",
    "Said",
    "Schedule",
    "SessionMessage",
    "SessionPatch",
    "Store",
    "TenantActivity",
    "Transactions",
    "Tx",
]


class Capability(StrEnum):
    """Optional features a backend declares instead of the engine checking its type."""

    KEYWORD_SEARCH = "keyword_search"
    VECTOR_SEARCH = "vector_search"
    BACKUP = "backup"


class Tx(Protocol):
    """The write ports of one unit of work. Obtained only from ``Store.transaction()``;
    valid only inside its ``with`` block. All ports share the one transaction."""

    @property
    def memories(self) -> MemoryWrites:
        """Memory inserts, versions, edits and vectors."""
        ...

    @property
    def sessions(self) -> SessionWrites:
        """Sessions, episodes and projects."""
        ...

    @property
    def jobs(self) -> JobWrites:
        """Enqueueing and finishing jobs with the data they concern."""
        ...

    @property
    def graph(self) -> GraphWrites:
        """Entity and relationship upserts."""
        ...

    @property
    def chunks(self) -> ChunkWrites:
        """A session's chunk ledger: recording and resetting chunks."""
        ...

    @property
    def access(self) -> AccessWrites:
        """Access counters of memories and episodes."""
        ...

    @property
    def consolidation(self) -> ConsolidationWrites:
        """Consolidations and their reverts."""
        ...

    @property
    def variables(self) -> VariableWrites:
        """Variables and token counters."""
        ...

    @property
    def admin(self) -> AdminWrites:
        """Store-wide settings and whole-tenant deletes."""
        ...

    @property
    def schedules(self) -> ScheduleWrites:
        """Dreaming schedules (and their claims) and scope configs."""
        ...


class Transactions(Protocol):
    """What a service that writes needs besides its read ports: a unit of work."""

    def transaction(self) -> AbstractContextManager[Tx]:
        """See ``Store.transaction``."""
        ...


class Store(Protocol):
    """A tenant-scoped memory store: read ports, transactions, and its declared capabilities.

    ``location`` names where the data lives (a path, a URL without its password).
    """

    capabilities: frozenset[Capability]
    location: str

    @property
    def memories(self) -> MemoryReads:
        """Memory lookups, lists and searches."""
        ...

    @property
    def sessions(self) -> SessionReads:
        """Sessions, episodes and projects."""
        ...

    @property
    def jobs(self) -> JobQueue:
        """The job queue: claims, failures, retries and job reads (global by id)."""
        ...

    @property
    def graph(self) -> GraphReads:
        """Entities, relationships and walks."""
        ...

    @property
    def chunks(self) -> ChunkReads:
        """A session's chunk state and messages."""
        ...

    @property
    def access(self) -> AccessReads:
        """Which tenants and memories went unused."""
        ...

    @property
    def consolidation(self) -> ConsolidationReads:
        """Episode stats and consolidation plans."""
        ...

    @property
    def variables(self) -> VariableReads:
        """Variables and token usage."""
        ...

    @property
    def admin(self) -> AdminReads:
        """Schema version, settings, counts and backups."""
        ...

    @property
    def schedules(self) -> ScheduleReads:
        """Dreaming schedules and scope configs."""
        ...

    def transaction(self) -> AbstractContextManager[Tx]:
        """A write transaction: commits when the block ends, rolls back if it raises.

        Blocks (up to the backend's busy timeout, 30 s for SQLite) while another writer holds
        the store. A driver failure that escapes the block (busy past the timeout, disk full,
        I/O) is raised as ``StoreError``, ``retryable`` when trying again may succeed.
        """
        ...

    def watch_jobs(self, wake: Callable[[], None]) -> Callable[[], None]:
        """Call ``wake`` soon after any process enqueues a job; return what stops watching.

        Lets idle workers skip their poll wait. A backend that cannot tell (SQLite) returns
        a no-op: its workers find new jobs by polling."""
        ...

    def close(self) -> None:
        """Close every connection; the store is unusable afterwards."""
        ...
