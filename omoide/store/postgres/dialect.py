"""How PostgreSQL spells what ``store.sql``'s shared statements leave open (see ``Dialect``)."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

import psycopg

from omoide.store.sql.dialect import Dialect


def _value(raw: Any) -> Any:
    return raw  # psycopg reads jsonb as Python values already


def _savepoint(conn: Any) -> AbstractContextManager[Any]:
    transaction: AbstractContextManager[Any] = conn.transaction()
    return transaction


POSTGRES = Dialect(
    name="postgres",
    placeholder="%s",
    json_param="?::jsonb",
    load_json=_value,
    true="true",
    false="false",
    greatest="GREATEST",
    strpos="strpos",
    unindexed="",
    binary=' COLLATE "C"',
    skip_locked=" FOR UPDATE SKIP LOCKED",
    row_lock=" FOR UPDATE",
    array_params=True,
    unique_violation=(psycopg.errors.UniqueViolation,),
    savepoint=_savepoint,
)
