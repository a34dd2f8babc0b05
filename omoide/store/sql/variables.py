"""``VariableReads`` / ``VariableWrites``: typed variables and LLM token counters.

A variable is unique per tenant by name; its value is stored as JSON beside its declared type.
Token usage is one counter row per tenant, incremented in place by an upsert (never a
read-modify-write, so concurrent writers never lose an increment).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from omoide.store.records import ms_to_dt_required
from omoide.store.sql.dialect import Conn, Dialect, Reader
from omoide.types import Scope, TokenUsage, Variable, VariableValue

_USAGE = (
    "SELECT CAST(coalesce(sum(prompt_tokens), 0) AS BIGINT) AS p,"
    " CAST(coalesce(sum(completion_tokens), 0) AS BIGINT) AS c,"
    " CAST(coalesce(sum(requests), 0) AS BIGINT) AS r FROM token_usage"
)
_ADD_USAGE = (
    "INSERT INTO token_usage (user_id, scope_id, prompt_tokens, completion_tokens,"
    " requests, updated_at) VALUES (?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (user_id, scope_id) DO UPDATE SET"
    " prompt_tokens = token_usage.prompt_tokens + excluded.prompt_tokens,"
    " completion_tokens = token_usage.completion_tokens + excluded.completion_tokens,"
    " requests = token_usage.requests + excluded.requests,"
    " updated_at = excluded.updated_at"
)


class SQLVariableReads:
    """Reads of variables and token usage (see ``VariableReads``)."""

    def __init__(self, db: Reader, dialect: Dialect) -> None:
        self._db = db
        self._d = dialect

    def get_variables(self, scope: Scope, names: Sequence[str] | None) -> list[Variable]:
        sql = "SELECT * FROM variables WHERE user_id = ? AND scope_id = ?"
        params: list[Any] = [scope.user_id, scope.scope_id]
        if names is not None:
            if not names:
                return []
            among, values = self._d.in_list("name", names)
            sql += f" AND {among}"
            params += values
        with self._db.read() as conn:
            cursor = conn.execute(self._d.sql(f"{sql} ORDER BY name{self._d.binary}"), params)
            return [self._variable(r) for r in cursor]

    def token_usage(self, scope: Scope | None) -> TokenUsage:
        sql, params = _USAGE, []
        if scope is not None:
            sql += " WHERE user_id = ? AND scope_id = ?"
            params = [scope.user_id, scope.scope_id]
        with self._db.read() as conn:
            row = conn.execute(self._d.sql(sql), params).fetchone()
        prompt, completion, requests = int(row["p"]), int(row["c"]), int(row["r"])
        return TokenUsage(
            prompt_tokens=prompt,
            completion_tokens=completion,
            total_tokens=prompt + completion,
            requests=requests,
        )

    def _variable(self, row: Any) -> Variable:
        return Variable(
            name=row["name"],
            value=self._d.load_json(row["value"]),
            type=row["type"],
            updated_at=ms_to_dt_required(row["updated_at"]),
        )


class SQLVariableWrites:
    """Writes of variables and token usage on the transaction's connection."""

    def __init__(self, conn: Conn, dialect: Dialect) -> None:
        self._conn = conn
        self._d = dialect

    def set_variables(
        self, scope: Scope, values: dict[str, tuple[VariableValue, str]], at_ms: int
    ) -> None:
        """Write ``{name: (value, type)}``; values must already have their type."""
        sql = self._d.sql(
            "INSERT INTO variables (user_id, scope_id, name, value, type, updated_at)"
            f" VALUES (?, ?, ?, {self._d.json_param}, ?, ?)"
            " ON CONFLICT (user_id, scope_id, name) DO UPDATE SET value = excluded.value,"
            " type = excluded.type, updated_at = excluded.updated_at"
        )
        for name, (value, type_) in values.items():
            dumped = self._d.dump_json(value)
            self._conn.execute(sql, (scope.user_id, scope.scope_id, name, dumped, type_, at_ms))

    def delete_variables(self, scope: Scope, names: Sequence[str]) -> list[str]:
        sql = self._d.sql("DELETE FROM variables WHERE user_id = ? AND scope_id = ? AND name = ?")
        deleted = []
        for name in dict.fromkeys(names):
            if self._conn.execute(sql, (scope.user_id, scope.scope_id, name)).rowcount:
                deleted.append(name)
        return deleted

    def add_usage(
        self, scope: Scope, prompt_tokens: int, completion_tokens: int, requests: int, at_ms: int
    ) -> None:
        if not (prompt_tokens or completion_tokens or requests):
            return
        self._conn.execute(
            self._d.sql(_ADD_USAGE),
            (scope.user_id, scope.scope_id, prompt_tokens, completion_tokens, requests, at_ms),
        )
