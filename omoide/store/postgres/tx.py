"""The write ports of one PostgreSQL transaction (``PostgresStore.transaction()`` makes them),
and PostgreSQL's layouts for the shared ports."""

from __future__ import annotations

from omoide.store.postgres import access, chunks, consolidation, graph, jobs, sessions
from omoide.store.postgres.admin import PostgresAdminWrites
from omoide.store.postgres.db import Conn
from omoide.store.postgres.dialect import POSTGRES
from omoide.store.postgres.memory_writes import PostgresMemoryStorage
from omoide.store.sql.tx import Layouts, SQLTx

LAYOUTS = Layouts(
    dialect=POSTGRES,
    episodes=sessions.LAYOUT,
    jobs=jobs.LAYOUT,
    chunks=chunks.LAYOUT,
    access=access.LAYOUT,
    consolidation=consolidation.LAYOUT,
    graph=graph.LAYOUT,
)

PostgresTx = SQLTx[PostgresMemoryStorage, PostgresAdminWrites]


def transaction_ports(conn: Conn) -> PostgresTx:
    """The ports of the transaction open on ``conn``."""
    return SQLTx(conn, LAYOUTS, PostgresMemoryStorage(conn), PostgresAdminWrites(conn))
