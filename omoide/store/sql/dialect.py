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
def _percent_style(sql: str) -> str:
    return sql.replace("%", "%%").replace("?", "%s")


def _same(sql: str) -> str:
    return sql


@dataclass(frozen=True)
class Dialect:
    """A backend's spelling of the few things portable SQL cannot say alike."""

    name: str
    #: ``?`` stays (SQLite) or becomes ``%s`` (PostgreSQL).
    translate: Callable[[str], str] = field(repr=False)
    #: The placeholder of a JSON parameter, in ``?`` form (``?`` or ``?::jsonb``).
    json_param: str
    #: A stored JSON value as Python: SQLite hands back text, PostgreSQL's jsonb a value.
    load_json: Callable[[Any], Any] = field(repr=False)
    true: str
    false: str
    #: Appended to a text column in ORDER BY so that it sorts by bytes on every backend.
    binary: str
    #: Appended to a SELECT whose rows an UPDATE claims (rows another claimer holds are skipped).
    skip_locked: str
    #: ``column IN (...)`` with each value a parameter, or ``column = ANY(?)`` with one array.
    array_params: bool

    def sql(self, statement: str) -> str:
        """``statement`` (written with ``?``) in this backend's placeholder style."""
        return self.translate(statement)

    def dump_json(self, value: Any) -> str:
        return json.dumps(value)

    def in_list(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        """A condition that ``column`` is one of ``values`` (non-empty), and its parameters."""
        if self.array_params:
            return f"{column} = ANY(?)", [list(values)]
        return f"{column} IN ({','.join('?' * len(values))})", list(values)


def _loads(raw: Any) -> Any:
    return json.loads(raw)


def _value(raw: Any) -> Any:
    return raw


SQLITE = Dialect(
    name="sqlite",
    translate=_same,
    json_param="?",
    load_json=_loads,
    true="1",
    false="0",
    binary="",
    skip_locked="",
    array_params=False,
)

POSTGRES = Dialect(
    name="postgres",
    translate=_percent_style,
    json_param="?::jsonb",
    load_json=_value,
    true="true",
    false="false",
    binary=' COLLATE "C"',
    skip_locked=" FOR UPDATE SKIP LOCKED",
    array_params=True,
)
