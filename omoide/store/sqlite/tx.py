"""The write ports of one SQLite transaction (``SQLiteStore.transaction()`` makes them), and
SQLite's layouts for the shared ports."""

from __future__ import annotations

import sqlite3

from omoide.store.sql.tx import Layouts, SQLTx
from omoide.store.sqlite import access, chunks, consolidation, graph, jobs, sessions
from omoide.store.sqlite.admin import SQLiteAdminWrites
from omoide.store.sqlite.dialect import SQLITE
from omoide.store.sqlite.keyword import Tokenizer
from omoide.store.sqlite.memory_writes import SQLiteMemoryStorage

LAYOUTS = Layouts(
    dialect=SQLITE,
    episodes=sessions.LAYOUT,
    jobs=jobs.LAYOUT,
    chunks=chunks.LAYOUT,
    access=access.LAYOUT,
    consolidation=consolidation.LAYOUT,
    graph=graph.LAYOUT,
)

SQLiteTx = SQLTx[SQLiteMemoryStorage, SQLiteAdminWrites]


def transaction_ports(conn: sqlite3.Connection, tokenizer: Tokenizer) -> SQLiteTx:
    """The ports of a transaction inside ``BEGIN IMMEDIATE`` on ``conn``."""
    memories = SQLiteMemoryStorage(conn, tokenizer)
    return SQLTx(conn, LAYOUTS, memories, SQLiteAdminWrites(conn, tokenizer))
