"""The storage seam: what the engine needs from a backend, split into ports by aggregate.

A backend implements ``Store``: one read port per aggregate (``store.memories``,
``store.sessions`` ...) and ``transaction()``, which hands out a ``Tx`` with one write port per
aggregate. Everything written through one ``Tx`` commits together or not at all, so a memory,
its full-text row, its vector or embed job, and its history are never split. Every tenant
method takes the tenant ``Scope``; no method returns rows of another tenant.
``tests/store/`` is the executable definition of these ports: every port method has a contract
test there (``tests/store/test_port_coverage.py`` keeps it so).
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from enum import StrEnum
from typing import Protocol

from omoide.store.ports.admin import AdminReads, AdminWrites
from omoide.store.ports.graph import GraphReads, GraphWrites
from omoide.store.ports.jobs import JobQueue, JobWrites
from omoide.store.ports.ledger import (
    ChunkCursor,
    ConsolidationPlan,
    EpisodeStat,
    LedgerReads,
    LedgerWrites,
    NewChunk,
    SessionMessage,
)
from omoide.store.ports.memories import MemoryReads, MemoryWrites, Neighbour, NewMemory
from omoide.store.ports.sessions import SessionPatch, SessionReads, SessionWrites
from omoide.store.ports.variables import VariableReads, VariableWrites

__all__ = [
    "Capability",
    "ChunkCursor",
    "ConsolidationPlan",
    "EpisodeStat",
    "Neighbour",
    "NewChunk",
    "NewMemory",
    "SessionMessage",
    "SessionPatch",
    "Store",
    "Tx",
]


class Capability(StrEnum):
    """Optional features a backend declares instead of the engine checking its type."""

    KEYWORD_SEARCH = "keyword_search"
    VECTOR_SEARCH = "vector_search"
    BACKUP = "backup"


class Tx(Protocol):
    """The write ports of one unit of work. Obtained only from ``Store.transaction()``."""

    @property
    def memories(self) -> MemoryWrites: ...
    @property
    def sessions(self) -> SessionWrites: ...
    @property
    def jobs(self) -> JobWrites: ...
    @property
    def graph(self) -> GraphWrites: ...
    @property
    def ledger(self) -> LedgerWrites: ...
    @property
    def variables(self) -> VariableWrites: ...
    @property
    def admin(self) -> AdminWrites: ...


class Store(Protocol):
    """A tenant-scoped memory store: read ports, transactions, and its declared capabilities.

    ``location`` names where the data lives (a path, a URL without its password).
    """

    capabilities: frozenset[Capability]
    location: str

    @property
    def memories(self) -> MemoryReads: ...
    @property
    def sessions(self) -> SessionReads: ...
    @property
    def jobs(self) -> JobQueue: ...
    @property
    def graph(self) -> GraphReads: ...
    @property
    def ledger(self) -> LedgerReads: ...
    @property
    def variables(self) -> VariableReads: ...
    @property
    def admin(self) -> AdminReads: ...

    def transaction(self) -> AbstractContextManager[Tx]: ...
    def close(self) -> None: ...
