"""How SQLite spells what ``store.sql``'s shared statements leave open (see ``Dialect``)."""

from __future__ import annotations

import json
from contextlib import nullcontext
from typing import Any

from omoide.store.sql.dialect import Dialect
from omoide.store.sqlite import cipher


def _savepoint(conn: Any) -> nullcontext[Any]:
    return nullcontext(conn)  # a failed statement leaves a SQLite transaction usable


SQLITE = Dialect(
    name="sqlite",
    placeholder="?",
    json_param="?",
    load_json=json.loads,
    true="1",
    false="0",
    greatest="max",
    strpos="instr",
    unindexed="+",
    binary="",
    skip_locked="",
    row_lock="",  # the writer holds the whole database
    array_params=False,
    unique_violation=cipher.IntegrityError,
    savepoint=_savepoint,
)
