"""What differs between the SQL backends in statements the ports share: one value per backend.

Statements are written once with ``?`` placeholders; ``Dialect.sql`` turns them into the
backend's (psycopg's ``%s``, with a literal ``%`` doubled). Everything else a statement needs
from its backend is a field: how a JSON parameter is cast and read back, how a list of values is
bound, how a boolean is written, how text sorts by bytes, how a claimed row is locked.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Protocol


class Cursor(Protocol):
    """What the shared ports use of a cursor (``sqlite3.Cursor``, psycopg's ``Cursor``)."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> Any: ...

    def __iter__(self) -> Iterator[Any]: ...


class Conn(Protocol):
    """A connection whose rows are read by column name (``sqlite3.Row``, psycopg's dict rows)."""

    def execute(self, sql: str, params: Any = ..., /) -> Cursor: ...


class Reader(Protocol):
    """Where reads run: a connection for one read, in a snapshot, released afterwards."""

    def read(self) -> AbstractContextManager[Conn]: ...


@lru_cache(maxsize=1024)
def _translated(statement: str, placeholder: str) -> str:
    if placeholder == "?":
        return statement
    return statement.replace("%", "%%").replace("?", placeholder)


@dataclass(frozen=True)
class Dialect:
    """A backend's spelling of the few things portable SQL cannot say alike."""

    name: str
    #: What ``?`` becomes: itself (SQLite) or ``%s`` (psycopg, which then needs ``%%`` for ``%``).
    placeholder: str
    #: The placeholder of a JSON parameter, in ``?`` form (``?`` or ``?::jsonb``).
    json_param: str
    #: A stored JSON value as Python: SQLite hands back text, PostgreSQL's jsonb a value.
    load_json: Callable[[Any], Any] = field(repr=False)
    true: str
    false: str
    #: The larger of its arguments (SQLite's scalar ``max``, PostgreSQL's ``GREATEST``).
    greatest: str
    #: The 1-based position of a needle in a text, 0 if absent (``instr`` / ``strpos``).
    strpos: str
    #: Put before a column in a WHERE clause to keep the planner off that column's index
    #: (SQLite's unary ``+``, where the tenant's index would lose to a lookup by id).
    unindexed: str
    #: Appended to a text column in ORDER BY so that it sorts by bytes on every backend.
    binary: str
    #: Appended to a SELECT whose rows an UPDATE claims (rows another claimer holds are skipped).
    skip_locked: str
    #: Appended to a SELECT of one row that the transaction must hold until it ends.
    row_lock: str
    #: ``column IN (...)`` with each value a parameter, or ``column = ANY(?)`` with one array.
    array_params: bool
    #: The driver's exceptions for a broken unique key (a ``Conflict`` to the caller).
    unique_violation: tuple[type[Exception], ...] = field(repr=False)
    #: A context around a statement that may fail on a unique key, so that the failure leaves
    #: the caller's transaction usable (PostgreSQL aborts it otherwise: a savepoint there).
    savepoint: Callable[[Any], AbstractContextManager[Any]] = field(repr=False)

    def sql(self, statement: str) -> str:
        """``statement`` (written with ``?``) in this backend's placeholder style."""
        return _translated(statement, self.placeholder)

    def dump_json(self, value: Any) -> str:
        return json.dumps(value)

    def among(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        """``in_list`` for lists of any length (one parameter: an array, or a JSON array
        SQLite reads with ``json_each``); empty matches nothing."""
        if self.array_params:
            return f"{column} = ANY(?)", [list(values)]
        return f"{column} IN (SELECT value FROM json_each(?))", [json.dumps(list(values))]

    def in_list(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        """A condition that ``column`` is one of ``values`` (non-empty), and its parameters."""
        if self.array_params:
            return f"{column} = ANY(?)", [list(values)]
        return f"{column} IN ({','.join('?' * len(values))})", list(values)
