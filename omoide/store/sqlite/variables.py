"""SQLite ``VariableReads`` / ``VariableWrites``: typed variables and LLM token counters.

A variable is unique per tenant by name; its value is stored as JSON beside its declared type.
Token usage is one counter row per tenant, incremented in place (never a read-modify-write).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from omoide.store.sqlite import rows
from omoide.store.sqlite.db import Database
from omoide.types import Scope, TokenUsage, Variable, VariableValue


class SQLiteVariableReads:
    """Reads of variables and token usage on reader connections."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def get_variables(self, scope: Scope, names: Sequence[str] | None) -> list[Variable]:
        sql = "SELECT * FROM variables WHERE user_id = ? AND scope_id = ?"
        params: list[str] = [scope.user_id, scope.scope_id]
        if names is not None:
            if not names:
                return []
            sql += f" AND name IN ({','.join('?' * len(names))})"
            params += list(names)
        cursor = self._db.reader().execute(sql + " ORDER BY name", params)
        return [rows.variable_from_row(r) for r in cursor]

    def token_usage(self, scope: Scope | None) -> TokenUsage:
        sql = (
            "SELECT coalesce(sum(prompt_tokens), 0), coalesce(sum(completion_tokens), 0),"
            " coalesce(sum(requests), 0) FROM token_usage"
        )
        params: list[str] = []
        if scope is not None:
            sql += " WHERE user_id = ? AND scope_id = ?"
            params = [scope.user_id, scope.scope_id]
        prompt, completion, requests = self._db.reader().execute(sql, params).fetchone()
        return TokenUsage(
            prompt_tokens=prompt,
            completion_tokens=completion,
            total_tokens=prompt + completion,
            requests=requests,
        )


class SQLiteVariableWrites:
    """Writes of variables and token usage on the transaction's connection."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def set_variables(
        self, scope: Scope, values: dict[str, tuple[VariableValue, str]], at_ms: int
    ) -> None:
        """Write ``{name: (value, type)}``; values must already have their type."""
        for name, (value, type_) in values.items():
            self._conn.execute(
                "INSERT INTO variables (user_id, scope_id, name, value, type, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (user_id, scope_id, name) DO UPDATE SET"
                " value = excluded.value, type = excluded.type, updated_at = excluded.updated_at",
                (scope.user_id, scope.scope_id, name, json.dumps(value), type_, at_ms),
            )

    def delete_variables(self, scope: Scope, names: Sequence[str]) -> list[str]:
        deleted = []
        for name in dict.fromkeys(names):
            cur = self._conn.execute(
                "DELETE FROM variables WHERE user_id = ? AND scope_id = ? AND name = ?",
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
            " requests, updated_at) VALUES (?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (user_id, scope_id) DO UPDATE SET"
            " prompt_tokens = prompt_tokens + excluded.prompt_tokens,"
            " completion_tokens = completion_tokens + excluded.completion_tokens,"
            " requests = requests + excluded.requests, updated_at = excluded.updated_at",
            (scope.user_id, scope.scope_id, prompt_tokens, completion_tokens, requests, at_ms),
        )
