"""The write ports of one SQLite transaction. Created only by ``SQLiteStore.transaction()``."""

from __future__ import annotations

import sqlite3

from omoide.store.sql.graph import SQLGraphWrites
from omoide.store.sql.jobs import SQLJobWrites
from omoide.store.sql.ledger import SQLLedgerWrites
from omoide.store.sql.schedules import SQLScheduleWrites
from omoide.store.sql.sessions import SQLSessionWrites
from omoide.store.sql.variables import SQLVariableWrites
from omoide.store.sqlite.admin import SQLiteAdminWrites
from omoide.store.sqlite.dialect import SQLITE
from omoide.store.sqlite.graph import LAYOUT as GRAPH
from omoide.store.sqlite.jobs import LAYOUT as JOBS
from omoide.store.sqlite.keyword import Tokenizer
from omoide.store.sqlite.ledger import LAYOUT as LEDGER
from omoide.store.sqlite.memory_writes import SQLiteMemoryWrites
from omoide.store.sqlite.sessions import LAYOUT as EPISODES


class SQLiteTx:
    """One port object per aggregate, all writing on the connection inside ``BEGIN IMMEDIATE``."""

    def __init__(self, conn: sqlite3.Connection, tokenizer: Tokenizer) -> None:
        memories = SQLiteMemoryWrites(conn, tokenizer)
        self._memories = memories
        self._sessions = SQLSessionWrites(conn, SQLITE, EPISODES)
        self._jobs = SQLJobWrites(conn, SQLITE, JOBS)
        self._graph = SQLGraphWrites(conn, SQLITE, GRAPH)
        self._ledger = SQLLedgerWrites(conn, SQLITE, LEDGER, memories)
        self._variables = SQLVariableWrites(conn, SQLITE)
        self._schedules = SQLScheduleWrites(conn, SQLITE)
        self._admin = SQLiteAdminWrites(conn, tokenizer)

    @property
    def memories(self) -> SQLiteMemoryWrites:
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
    def admin(self) -> SQLiteAdminWrites:
        return self._admin

    @property
    def schedules(self) -> SQLScheduleWrites:
        return self._schedules
