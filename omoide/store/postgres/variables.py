"""PostgreSQL ``VariableReads`` / ``VariableWrites``: typed variables and LLM token counters.

A variable is unique per tenant by name; its value is stored as JSON beside its declared type.
Token usage is one counter row per tenant, incremented in place by an upsert (never a
read-modify-write, so concurrent writers never lose an increment).
"""

from __future__ import annotations

from collections.abc import Sequence

from omoide.store.postgres import rows
from omoide.store.postgres.db import Conn, Database
from omoide.store.postgres.shared import jsonb
from omoide.types import Scope, TokenUsage, Variable, VariableValue


class PostgresVariableReads:
    """Reads of variables and token usage (see ``VariableReads``)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def get_variables(self, scope: Scope, names: Sequence[str] | None) -> list[Variable]:
        sql = "SELECT * FROM variables WHERE user_id = %s AND scope_id = %s"
        params: list[object] = [scope.user_id, scope.scope_id]
        if names is not None:
            if not names:
                return []
            sql += " AND name = ANY(%s)"
            params.append(list(names))
        with self._db.read() as conn:
            cursor = conn.execute(sql + ' ORDER BY name COLLATE "C"', params)
            return [rows.variable(r) for r in cursor]

    def token_usage(self, scope: Scope | None) -> TokenUsage:
        sql = (
            "SELECT coalesce(sum(prompt_tokens), 0)::bigint AS p,"
            " coalesce(sum(completion_tokens), 0)::bigint AS c,"
            " coalesce(sum(requests), 0)::bigint AS r FROM token_usage"
        )
        params: list[str] = []
        if scope is not None:
            sql += " WHERE user_id = %s AND scope_id = %s"
            params = [scope.user_id, scope.scope_id]
        with self._db.read() as conn:
            row = conn.execute(sql, params).fetchone()
        prompt, completion, requests = (
            (int(row["p"]), int(row["c"]), int(row["r"]))
            if row
            else (
                0,
                0,
                0,
            )
        )
        return TokenUsage(
            prompt_tokens=prompt,
            completion_tokens=completion,
            total_tokens=prompt + completion,
            requests=requests,
        )


class PostgresVariableWrites:
    """Writes of variables and token usage on the transaction's connection."""

    def __init__(self, conn: Conn) -> None:
        self._conn = conn

    def set_variables(
        self, scope: Scope, values: dict[str, tuple[VariableValue, str]], at_ms: int
    ) -> None:
        """Write ``{name: (value, type)}``; values must already have their type."""
        for name, (value, type_) in values.items():
            self._conn.execute(
                "INSERT INTO variables (user_id, scope_id, name, value, type, updated_at)"
                " VALUES (%s, %s, %s, %s::jsonb, %s, %s)"
                " ON CONFLICT (user_id, scope_id, name) DO UPDATE SET value = excluded.value,"
                " type = excluded.type, updated_at = excluded.updated_at",
                (scope.user_id, scope.scope_id, name, jsonb(value), type_, at_ms),
            )

    def delete_variables(self, scope: Scope, names: Sequence[str]) -> list[str]:
        deleted = []
        for name in dict.fromkeys(names):
            cur = self._conn.execute(
                "DELETE FROM variables WHERE user_id = %s AND scope_id = %s AND name = %s",
                (scope.user_id, scope.scope_id, name),
            )
            if cur.rowcount:
                deleted.append(name)
        return deleted

    def add_usage(
        self, scope: Scope, prompt_tokens: int, completion_tokens: int, requests: int, at_ms: int
    ) -> None:
        if not (prompt_tokens or completion_tokens or requests):
            return
        self._conn.execute(
            "INSERT INTO token_usage (user_id, scope_id, prompt_tokens, completion_tokens,"
            " requests, updated_at) VALUES (%s, %s, %s, %s, %s, %s)"
            " ON CONFLICT (user_id, scope_id) DO UPDATE SET"
            " prompt_tokens = token_usage.prompt_tokens + excluded.prompt_tokens,"
            " completion_tokens = token_usage.completion_tokens + excluded.completion_tokens,"
            " requests = token_usage.requests + excluded.requests,"
            " updated_at = excluded.updated_at",
            (scope.user_id, scope.scope_id, prompt_tokens, completion_tokens, requests, at_ms),
        )
