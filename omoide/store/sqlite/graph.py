"""SQLite side of LLM extraction: job steps, entities, relationships, variables, token counters.

``GraphTxMixin`` adds the writes to ``SQLiteTx``, ``GraphStoreMixin`` the reads to
``SQLiteStore``. Entities are unique per tenant by ``(name, type)`` (names compare ignoring ASCII
case), so the same person mentioned by two users is two entities. Upserts count mentions;
deleting an entity cascades to its relationships, provenance rows and vector.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from omoide.errors import InvalidInput, NotFound
from omoide.store.sqlite import rows
from omoide.types import (
    Entity,
    Relationship,
    Scope,
    TokenUsage,
    Variable,
    VariableValue,
    entity_text,
    now_ms,
)


class GraphTxMixin:
    conn: sqlite3.Connection

    # extraction jobs: per-step records make a re-run skip what already happened --------
    def fail_job_now(self, job_id: int, error: str, result: dict[str, Any] | None = None) -> None:
        """Mark a job failed without further attempts (an error retrying cannot fix)."""
        self.conn.execute(
            "UPDATE jobs SET state = 'failed', last_error = ?, lease_until = NULL, updated_at = ?,"
            " result = coalesce(?, result) WHERE id = ?",
            (error[-4000:], now_ms(), None if result is None else json.dumps(result), job_id),
        )

    def claim_step(self, job_id: int, step: str, lease_ms: int) -> bool:
        """True when ``step`` of a running job has not happened yet; also renews the lease.

        False when the step is recorded (a previous run got that far), or when the job is no
        longer running (finished by a twin whose lease had expired, deleted with its tenant).
        """
        ts = now_ms()
        cur = self.conn.execute(
            "UPDATE jobs SET lease_until = ?, updated_at = ? WHERE id = ? AND state = 'running'",
            (ts + lease_ms, ts, job_id),
        )
        if not cur.rowcount:
            return False
        row = self.conn.execute(
            "SELECT 1 FROM job_steps WHERE job_id = ? AND step = ?", (job_id, step)
        ).fetchone()
        return row is None

    def record_step(self, job_id: int, step: str, record: dict[str, Any]) -> None:
        """``record``: status (done or skipped), detail, calls, prompt/completion tokens."""
        self.conn.execute(
            "INSERT INTO job_steps (job_id, step, status, detail, calls, prompt_tokens,"
            " completion_tokens, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                job_id,
                step,
                record["status"],
                record.get("detail", ""),
                record.get("calls", 0),
                record.get("prompt_tokens", 0),
                record.get("completion_tokens", 0),
                now_ms(),
            ),
        )

    # entities and relationships -------------------------------------------------------
    def upsert_entity(
        self,
        scope: Scope,
        name: str,
        type_: str,
        at_ms: int,
        episode_id: str | None = None,
        source: str = "extraction",
    ) -> Entity:
        """Insert, or count one more mention of, ``(name, type)`` in ``scope``."""
        if not name.strip() or not type_.strip():
            raise InvalidInput("an entity needs a name and a type")
        self.conn.execute(
            "INSERT INTO entities (id, user_id, scope_id, name, type, source, last_seen_at,"
            " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (user_id, scope_id, name, type) DO UPDATE SET"
            " mention_count = mention_count + 1,"
            " last_seen_at = max(last_seen_at, excluded.last_seen_at)",
            (uuid.uuid4().hex, scope.user_id, scope.scope_id, name, type_, source, at_ms, at_ms),
        )
        row = self.conn.execute(
            "SELECT id FROM entities WHERE user_id = ? AND scope_id = ? AND name = ? AND type = ?",
            (scope.user_id, scope.scope_id, name, type_),
        ).fetchone()
        if episode_id is not None:
            self.conn.execute(
                "INSERT OR IGNORE INTO entity_episodes (entity_id, episode_id) VALUES (?, ?)",
                (row["id"], episode_id),
            )
        return self._entity(scope, row["id"])

    def put_entity_vector(self, scope: Scope, entity_id: str, vector: np.ndarray) -> None:
        if self._entity_row(scope, entity_id) is None:
            return  # deleted before its embedding arrived
        self.conn.execute(
            "INSERT INTO entity_vectors (entity_id, tenant, vec) VALUES (?, ?, ?)"
            " ON CONFLICT (entity_id) DO UPDATE SET vec = excluded.vec",
            (entity_id, rows.tenant_key(scope), vector.astype(np.float32).tobytes()),
        )

    def upsert_relationship(
        self,
        scope: Scope,
        from_id: str,
        to_id: str,
        label: str,
        notes: str | None,
        at_ms: int,
    ) -> Relationship:
        """Insert, or count one more mention of, an edge; existing notes are kept."""
        for entity_id in (from_id, to_id):
            if self._entity_row(scope, entity_id) is None:
                raise NotFound(f"entity {entity_id!r} not found", id=entity_id)
        new_id = uuid.uuid4().hex
        self.conn.execute(
            "INSERT INTO relationships (id, user_id, scope_id, from_id, to_id, label, notes,"
            " last_seen_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (from_id, to_id, label) DO UPDATE SET"
            " mention_count = mention_count + 1, notes = coalesce(notes, excluded.notes),"
            " last_seen_at = max(last_seen_at, excluded.last_seen_at)",
            (new_id, scope.user_id, scope.scope_id, from_id, to_id, label, notes, at_ms, at_ms),
        )
        row = self.conn.execute(
            rows.RELATIONSHIP_SELECT + " WHERE r.from_id = ? AND r.to_id = ? AND r.label = ?",
            (from_id, to_id, label),
        ).fetchone()
        return rows.relationship_from_row(row)

    def delete_entity(self, scope: Scope, entity_id: str) -> None:
        """Delete an entity with its relationships, provenance and vector (by cascade)."""
        if self._entity_row(scope, entity_id) is None:
            raise NotFound(f"entity {entity_id!r} not found", id=entity_id)
        self.conn.execute("DELETE FROM entities WHERE id = ?", (entity_id,))

    def _entity_row(self, scope: Scope, entity_id: str) -> sqlite3.Row | None:
        return self.conn.execute(
            "SELECT id FROM entities WHERE id = ? AND user_id = ? AND scope_id = ?",
            (entity_id, scope.user_id, scope.scope_id),
        ).fetchone()

    def _entity(self, scope: Scope, entity_id: str) -> Entity:
        row = self.conn.execute(
            rows.ENTITY_SELECT + " WHERE e.id = ? AND e.user_id = ? AND e.scope_id = ?",
            (entity_id, scope.user_id, scope.scope_id),
        ).fetchone()
        return rows.entity_from_row(row)

    # variables and token counters -------------------------------------------------------
    def set_variables(
        self, scope: Scope, values: dict[str, tuple[VariableValue, str]], at_ms: int
    ) -> None:
        """Write ``{name: (value, type)}``; values must already have their type."""
        for name, (value, type_) in values.items():
            self.conn.execute(
                "INSERT INTO variables (user_id, scope_id, name, value, type, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (user_id, scope_id, name) DO UPDATE SET"
                " value = excluded.value, type = excluded.type, updated_at = excluded.updated_at",
                (scope.user_id, scope.scope_id, name, json.dumps(value), type_, at_ms),
            )

    def delete_variables(self, scope: Scope, names: Sequence[str]) -> list[str]:
        deleted = []
        for name in dict.fromkeys(names):
            cur = self.conn.execute(
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
        self.conn.execute(
            "INSERT INTO token_usage (user_id, scope_id, prompt_tokens, completion_tokens,"
            " requests, updated_at) VALUES (?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (user_id, scope_id) DO UPDATE SET"
            " prompt_tokens = prompt_tokens + excluded.prompt_tokens,"
            " completion_tokens = completion_tokens + excluded.completion_tokens,"
            " requests = requests + excluded.requests, updated_at = excluded.updated_at",
            (scope.user_id, scope.scope_id, prompt_tokens, completion_tokens, requests, at_ms),
        )


class GraphStoreMixin:
    def _reader(self) -> sqlite3.Connection:
        raise NotImplementedError

    def get_entity(self, scope: Scope, entity_id: str) -> Entity:
        row = (
            self._reader()
            .execute(
                rows.ENTITY_SELECT + " WHERE e.id = ? AND e.user_id = ? AND e.scope_id = ?",
                (entity_id, scope.user_id, scope.scope_id),
            )
            .fetchone()
        )
        if row is None:
            raise NotFound(f"entity {entity_id!r} not found", id=entity_id)
        return rows.entity_from_row(row)

    def list_entities(
        self,
        scope: Scope,
        type_: str | None,
        limit: int,
        offset: int,
        mentioned_in: str | None = None,
    ) -> tuple[list[Entity], int]:
        """Most recently seen first, with the true total. ``mentioned_in``: only entities whose
        name occurs in that text, ignoring case."""
        where, params = "e.user_id = ? AND e.scope_id = ?", [scope.user_id, scope.scope_id]
        if type_ is not None:
            where += " AND e.type = ?"
            params.append(type_)
        if mentioned_in is not None:
            where += " AND instr(lower(?), lower(e.name)) > 0"
            params.append(mentioned_in)
        conn = self._reader()
        total = conn.execute(f"SELECT count(*) FROM entities e WHERE {where}", params)
        count = int(total.fetchone()[0])
        cursor = conn.execute(
            rows.ENTITY_SELECT + f" WHERE {where} ORDER BY e.last_seen_at DESC, e.rowid DESC"
            " LIMIT ? OFFSET ?",
            (*params, limit, offset),
        )
        return [rows.entity_from_row(r) for r in cursor], count

    def list_relationships(
        self, scope: Scope, entity_id: str | None, limit: int, offset: int
    ) -> tuple[list[Relationship], int]:
        """Edges of the tenant, or only those touching ``entity_id`` (either direction)."""
        where, params = "r.user_id = ? AND r.scope_id = ?", [scope.user_id, scope.scope_id]
        if entity_id is not None:
            self.get_entity(scope, entity_id)  # NotFound for another tenant's id
            where += " AND (r.from_id = ? OR r.to_id = ?)"
            params += [entity_id, entity_id]
        conn = self._reader()
        total = conn.execute(f"SELECT count(*) FROM relationships r WHERE {where}", params)
        count = int(total.fetchone()[0])
        cursor = conn.execute(
            rows.RELATIONSHIP_SELECT + f" WHERE {where}"
            " ORDER BY r.last_seen_at DESC, r.rowid DESC LIMIT ? OFFSET ?",
            (*params, limit, offset),
        )
        return [rows.relationship_from_row(r) for r in cursor], count

    def entity_vector_search(
        self, scope: Scope, vector: np.ndarray, limit: int
    ) -> list[tuple[str, float]]:
        """Exact cosine scan of the tenant's entity vectors (entities number in thousands,
        not millions, per tenant). Vectors of another dimension (before a reindex) are skipped.
        """
        cursor = self._reader().execute(
            "SELECT entity_id, vec FROM entity_vectors WHERE tenant = ?", (rows.tenant_key(scope),)
        )
        query = vector.astype(np.float32, copy=False)
        width = query.shape[0] * 4
        found = [(r[0], r[1]) for r in cursor if len(r[1]) == width]
        if not found:
            return []
        matrix = np.frombuffer(b"".join(blob for _, blob in found), dtype=np.float32)
        scores = matrix.reshape(len(found), -1) @ query
        order = np.argsort(-scores, kind="stable")[:limit]
        return [(found[i][0], float(scores[i])) for i in order]

    def iter_entity_texts(self, batch: int) -> Iterator[list[tuple[Scope, str, str]]]:
        """Every entity as ``(scope, id, text to embed)``, for a reindex."""
        last = 0
        conn = self._reader()
        while True:
            chunk = conn.execute(
                "SELECT rowid, id, user_id, scope_id, name, type FROM entities WHERE rowid > ?"
                " ORDER BY rowid LIMIT ?",
                (last, batch),
            ).fetchall()
            if not chunk:
                return
            last = int(chunk[-1]["rowid"])
            yield [
                (
                    Scope(user_id=r["user_id"], scope_id=r["scope_id"]),
                    r["id"],
                    entity_text(r["name"], r["type"]),
                )
                for r in chunk
            ]

    def get_variables(self, scope: Scope, names: Sequence[str] | None) -> list[Variable]:
        sql = "SELECT * FROM variables WHERE user_id = ? AND scope_id = ?"
        params: list[str] = [scope.user_id, scope.scope_id]
        if names is not None:
            if not names:
                return []
            sql += f" AND name IN ({','.join('?' * len(names))})"
            params += list(names)
        cursor = self._reader().execute(sql + " ORDER BY name", params)
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
        prompt, completion, requests = self._reader().execute(sql, params).fetchone()
        return TokenUsage(
            prompt_tokens=prompt,
            completion_tokens=completion,
            total_tokens=prompt + completion,
            requests=requests,
        )
