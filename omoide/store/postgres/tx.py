"""The write ports of one PostgreSQL transaction; made only by ``PostgresStore.transaction()``."""

from __future__ import annotations

from omoide.store.postgres.admin import PostgresAdminWrites
from omoide.store.postgres.db import Conn
from omoide.store.postgres.dialect import POSTGRES
from omoide.store.postgres.graph import LAYOUT as GRAPH
from omoide.store.postgres.jobs import LAYOUT as JOBS
from omoide.store.postgres.ledger import LAYOUT as LEDGER
from omoide.store.postgres.memory_writes import PostgresMemoryWrites
from omoide.store.postgres.sessions import LAYOUT as EPISODES
from omoide.store.sql.graph import SQLGraphWrites
from omoide.store.sql.jobs import SQLJobWrites
from omoide.store.sql.ledger import SQLLedgerWrites
from omoide.store.sql.schedules import SQLScheduleWrites
from omoide.store.sql.sessions import SQLSessionWrites
from omoide.store.sql.variables import SQLVariableWrites


class PostgresTx:
    """One port object per aggregate, all writing on the transaction's connection."""

    def __init__(self, conn: Conn) -> None:
        memories = PostgresMemoryWrites(conn)
        self._memories = memories
        self._sessions = SQLSessionWrites(conn, POSTGRES, EPISODES)
        self._jobs = SQLJobWrites(conn, POSTGRES, JOBS)
        self._graph = SQLGraphWrites(conn, POSTGRES, GRAPH)
        self._ledger = SQLLedgerWrites(conn, POSTGRES, LEDGER, memories)
        self._variables = SQLVariableWrites(conn, POSTGRES)
        self._schedules = SQLScheduleWrites(conn, POSTGRES)
        self._admin = PostgresAdminWrites(conn)

    @property
    def memories(self) -> PostgresMemoryWrites:
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
    def ledger(self) -> SQLLedgerWrites:
        return self._ledger

    @property
    def variables(self) -> SQLVariableWrites:
        return self._variables

    @property
    def admin(self) -> PostgresAdminWrites:
        return self._admin

    @property
    def schedules(self) -> SQLScheduleWrites:
        return self._schedules
