"""The write ports of one transaction, the shared read ports, and the layouts a backend gives
them.

A backend's store opens the transaction (SQLite: ``BEGIN IMMEDIATE`` on its one writer;
PostgreSQL: a pooled connection) and builds an ``SQLTx`` over that connection: the shared write
ports, beside the backend's own part of the memory writes (``MemoryStorage``: bulk inserts, its
keyword index, the maintenance after the commit) and of its admin writes (``AdminWriteStorage``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, NamedTuple, TypeVar

from omoide.store.sql.access import AccessLayout, SQLAccessReads, SQLAccessWrites
from omoide.store.sql.admin import AdminWriteStorage, SQLAdminWrites
from omoide.store.sql.chunks import ChunkLayout, SQLChunkReads, SQLChunkWrites
from omoide.store.sql.consolidation import (
    ConsolidationLayout,
    SQLConsolidationReads,
    SQLConsolidationWrites,
)
from omoide.store.sql.dialect import Conn, Dialect
from omoide.store.sql.graph import GraphLayout, SQLGraphReads, SQLGraphWrites
from omoide.store.sql.jobs import Database, JobLayout, SQLJobQueue, SQLJobWrites
from omoide.store.sql.memory_writes import MemoryStorage, SQLMemoryWrites
from omoide.store.sql.schedules import SQLScheduleReads, SQLScheduleWrites
from omoide.store.sql.sessions import EpisodeLayout, SQLSessionReads, SQLSessionWrites
from omoide.store.sql.variables import SQLVariableReads, SQLVariableWrites


@dataclass(frozen=True)
class Layouts:
    """A backend's dialect and what its schema lays out differently, port by port."""

    dialect: Dialect
    episodes: EpisodeLayout
    jobs: JobLayout
    chunks: ChunkLayout
    access: AccessLayout
    consolidation: ConsolidationLayout
    graph: GraphLayout


M = TypeVar("M", bound=MemoryStorage)
A = TypeVar("A", bound=AdminWriteStorage)


class SQLTx(Generic[M, A]):
    """One port object per aggregate, all writing on the transaction's connection."""

    def __init__(self, conn: Conn, layouts: Layouts, memories: M, admin: A) -> None:
        d = layouts.dialect
        self._memories = SQLMemoryWrites(conn, d, memories)
        self._admin = SQLAdminWrites(conn, d, admin)
        self._sessions = SQLSessionWrites(conn, d, layouts.episodes)
        self._jobs = SQLJobWrites(conn, d, layouts.jobs)
        self._graph = SQLGraphWrites(conn, d, layouts.graph)
        self._chunks = SQLChunkWrites(conn, d, layouts.chunks, self._memories)
        self._access = SQLAccessWrites(conn, d, layouts.access)
        self._consolidation = SQLConsolidationWrites(conn, d, layouts.consolidation)
        self._variables = SQLVariableWrites(conn, d)
        self._schedules = SQLScheduleWrites(conn, d)

    @property
    def memories(self) -> SQLMemoryWrites[M]:
        return self._memories

    @property
    def sessions(self) -> SQLSessionWrites:
        return self._sessions

    @property
    def jobs(self) -> SQLJobWrites:
        return self._jobs

    @property
    def graph(self) -> SQLGraphWrites:
        return self._graph

    @property
    def chunks(self) -> SQLChunkWrites:
        return self._chunks

    @property
    def access(self) -> SQLAccessWrites:
        return self._access

    @property
    def consolidation(self) -> SQLConsolidationWrites:
        return self._consolidation

    @property
    def variables(self) -> SQLVariableWrites:
        return self._variables

    @property
    def admin(self) -> SQLAdminWrites[A]:
        return self._admin

    @property
    def schedules(self) -> SQLScheduleWrites:
        return self._schedules


class SharedReads(NamedTuple):
    """The read ports a store builds from its ``Layouts`` (it adds its memories and admin)."""

    sessions: SQLSessionReads
    jobs: SQLJobQueue
    graph: SQLGraphReads
    chunks: SQLChunkReads
    access: SQLAccessReads
    consolidation: SQLConsolidationReads
    variables: SQLVariableReads
    schedules: SQLScheduleReads


def shared_reads(db: Database, layouts: Layouts) -> SharedReads:
    """The shared read ports over ``db`` (reads, and the job queue's own write transactions)."""
    d = layouts.dialect
    return SharedReads(
        sessions=SQLSessionReads(db, d, layouts.episodes),
        jobs=SQLJobQueue(db, d, layouts.jobs),
        graph=SQLGraphReads(db, d, layouts.graph),
        chunks=SQLChunkReads(db, d, layouts.chunks),
        access=SQLAccessReads(db, d),
        consolidation=SQLConsolidationReads(db, d, layouts.consolidation, layouts.episodes.order),
        variables=SQLVariableReads(db, d),
        schedules=SQLScheduleReads(db, d),
    )
