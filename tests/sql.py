"""Raw SQL on a store's own database, on either backend, for what no port does on purpose.

Tests use it to make time pass without sleeping (a pending job's backoff is over, a running
job's lease expired) and to read a column no model exposes (``lease_until``). The statement
is written once with ``?`` placeholders and runs as it is on SQLite (on the writer connection,
as those tests always did) and with ``%s`` on PostgreSQL (one committed transaction).
"""

from __future__ import annotations

import sqlite3
from typing import Any

from omoide.store import Store


def execute(store: Store, statement: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Run ``statement`` on ``store``'s database; the rows it returns, as tuples."""
    from omoide.store.postgres import PostgresStore

    if isinstance(store, PostgresStore):
        with store._db.write() as conn:
            cursor = conn.execute(statement.replace("?", "%s"), params)
            return [tuple(row.values()) for row in cursor] if cursor.description else []
    cursor = store._writer.execute(statement, params)  # type: ignore[attr-defined]
    return [tuple(row) for row in cursor.fetchall()]


def dump(store: Store) -> list[str]:
    """Every row of the database as text, to compare before and after (SQLite: its
    ``iterdump``, as those tests always did; PostgreSQL: each row of each table of the
    store's schema as ``table: {column: value}``, sorted)."""
    from omoide.store.postgres import PostgresStore

    if isinstance(store, PostgresStore):
        with store._db.read() as conn:
            tables = conn.execute(
                "SELECT table_name FROM information_schema.tables"
                " WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
            ).fetchall()
            return sorted(
                f"{t['table_name']}: {dict(row)!r}"
                for t in tables
                for row in conn.execute(f'SELECT * FROM "{t["table_name"]}"')
            )
    conn = sqlite3.connect(store.location)  # type: ignore[attr-defined]
    try:
        return list(conn.iterdump())
    finally:
        conn.close()
