"""``AdminWrites.import_records``: exported records back into rows, as they were.

Each writer inserts one record in the caller's transaction and says whether it did: a record
whose key the store holds already is skipped (the import rule of ``omoide.store.ports.transfer``),
so importing a file twice changes nothing. Public ids are unique across tenants: ``owned``
looks an id up among every tenant's rows. The kinds whose rows a backend lays out its own way
(memories and entities: full-text and vector rows, provenance) and how it skips a
held key come in an ``ImportLayout``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from omoide.errors import Conflict, InvalidInput, NotFound
from omoide.store.ports.transfer import HISTORY_ENTRY_FIELDS, RECORD_FIELDS
from omoide.store.sql.chunks import ChunkLayout
from omoide.store.sql.dialect import Conn, Dialect
from omoide.store.sql.sessions import session_pk
from omoide.types import Scope

Record = dict[str, Any]
Writer = Callable[[Conn, Record], bool]


@dataclass(frozen=True)
class ImportLayout:
    """What differs in how a backend imports records."""

    #: ``INSERT INTO ...`` made to skip a row whose unique key the store holds already.
    held: Callable[[str], str]
    #: ``INSERT INTO ...`` of a row whose id was checked absent, made to skip it should a
    #: concurrent import have written it since (where one can).
    raced: Callable[[str], str]
    #: A project's ``isolated`` flag as the backend binds it.
    flag: Callable[[Any], Any]
    #: The driver's errors (with ``KeyError``, ``TypeError``, ``ValueError``) of a malformed
    #: record: an ``InvalidInput`` to the caller.
    malformed: tuple[type[Exception], ...]
    #: Whether the tenant holds a job of the record's kind with an equal payload (given as
    #: dumped JSON), key order ignored (connection, record, payload).
    job_held: Callable[[Any, Record, str], bool]
    #: Whether ``job_steps`` rows carry the tenant's ``user_id``.
    steps_by_tenant: bool
    #: The writers of the kinds the backend writes itself (memory, entity).
    own: Mapping[str, Callable[[Any, Record], bool]]


def scope_of(record: Record) -> Scope:
    return Scope(user_id=record["user_id"], scope_id=record["scope_id"])


def owned(conn: Conn, d: Dialect, table: str, record_id: str, record: Record) -> bool:
    """Whether ``table`` holds ``record_id`` already; ``Conflict`` if another tenant does."""
    found = conn.execute(  # the record's own tenant first, should another hold it too
        d.sql(
            f"SELECT user_id, scope_id FROM {table} WHERE id = ?"
            " ORDER BY (user_id = ? AND scope_id = ?) DESC LIMIT 1"
        ),
        (record_id, record["user_id"], record["scope_id"]),
    ).fetchone()
    if found is None:
        return False
    if (found["user_id"], found["scope_id"]) != (record["user_id"], record["scope_id"]):
        raise Conflict(f"{table} id {record_id!r} belongs to another tenant", id=record_id)
    return True


def _object(value: Any) -> dict[str, Any]:
    """A JSON object field (schedule settings, scope config): the readers return it as a dict."""
    if not isinstance(value, dict):
        raise InvalidInput(f"expected a JSON object, got {type(value).__name__}")
    return value


class _Writers:
    """The writers of the kinds both backends lay out alike."""

    def __init__(self, d: Dialect, layout: ImportLayout, chunks: ChunkLayout) -> None:
        self._d = d
        self._layout = layout
        self._chunks = chunks

    def all(self) -> dict[str, Writer]:
        return {
            "project": self.project,
            "session": self.session,
            "episode": self.episode,
            "history": self.history,
            "relationship": self.relationship,
            "chunk_state": self.chunk_state,
            "chunk": self.chunk,
            "consolidation": self.consolidation,
            "variable": self.variable,
            "usage": self.usage,
            "schedule": self.schedule,
            "scope_config": self.scope_config,
            "job": self.job,
            **self._layout.own,
        }

    def _held(self, conn: Conn, sql: str, params: Sequence[Any]) -> bool:
        return conn.execute(self._d.sql(self._layout.held(sql)), params).rowcount == 1

    def project(self, conn: Conn, r: Record) -> bool:
        return self._held(
            conn,
            "INSERT INTO projects (user_id, scope_id, name, description, isolated, colour, icon,"
            " notes, system_prompt, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                *(r["user_id"], r["scope_id"], r["name"], r["description"]),
                *(self._layout.flag(r["isolated"]), r["colour"], r["icon"], r["notes"]),
                *(r["system_prompt"], r["created_at"], r["updated_at"]),
            ),
        )

    def session(self, conn: Conn, r: Record) -> bool:
        d, project = self._d, None
        if r["project"] is not None:
            row = conn.execute(
                d.sql("SELECT id FROM projects WHERE user_id = ? AND scope_id = ? AND name = ?"),
                (r["user_id"], r["scope_id"], r["project"]),
            ).fetchone()
            if row is None:
                raise NotFound(f"project {r['project']!r} not found", id=r["project"])
            project = row["id"]
        return self._held(
            conn,
            "INSERT INTO sessions (user_id, scope_id, external_id, name, project_id, metadata,"
            f" created_at, updated_at) VALUES (?, ?, ?, ?, ?, {d.json_param}, ?, ?)",
            (
                *(r["user_id"], r["scope_id"], r["id"], r["name"], project),
                *(d.dump_json(r["metadata"]), r["created_at"], r["updated_at"]),
            ),
        )

    def episode(self, conn: Conn, r: Record) -> bool:
        d = self._d
        if owned(conn, d, "episodes", r["id"], r):
            return False
        sql = self._layout.raced(
            "INSERT INTO episodes (id, session_id, user_id, scope_id, messages, created_at,"
            " access_count, last_accessed_at, consolidated_at, consolidation_id)"
            f" VALUES (?, ?, ?, ?, {d.json_param}, ?, ?, ?, ?, ?)"
        )
        session = session_pk(conn, d, scope_of(r), r["session"])
        return (
            conn.execute(
                d.sql(sql),
                (
                    *(r["id"], session, r["user_id"], r["scope_id"]),
                    *(d.dump_json(r["messages"]), r["created_at"], r["access_count"]),
                    *(r["last_accessed_at"], r["consolidated_at"], r["consolidation_id"]),
                ),
            ).rowcount
            == 1
        )

    def history(self, conn: Conn, r: Record) -> bool:
        d = self._d
        held = conn.execute(
            d.sql(
                "SELECT 1 FROM history WHERE user_id = ? AND memory_id = ? AND scope_id = ? LIMIT 1"
            ),
            (r["user_id"], r["memory_id"], r["scope_id"]),
        ).fetchone()
        if held is not None:
            return False
        for entry in r["entries"]:
            if set(entry) != set(HISTORY_ENTRY_FIELDS):
                raise InvalidInput(f"history entry fields {sorted(entry)} are not the export's")
            conn.execute(
                d.sql(
                    "INSERT INTO history (memory_id, user_id, scope_id, event, old_text,"
                    " new_text, actor, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
                ),
                (
                    *(r["memory_id"], r["user_id"], r["scope_id"]),
                    *tuple(entry[k] for k in HISTORY_ENTRY_FIELDS),
                ),
            )
        return True

    def relationship(self, conn: Conn, r: Record) -> bool:
        if owned(conn, self._d, "relationships", r["id"], r):
            return False
        for end in (r["from_id"], r["to_id"]):
            if not owned(conn, self._d, "entities", end, r):
                raise NotFound(f"entity {end!r} not found", id=end)
        return self._held(
            conn,
            "INSERT INTO relationships (id, user_id, scope_id, from_id, to_id, label,"
            " mention_count, notes, last_seen_at, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                *(r["id"], r["user_id"], r["scope_id"], r["from_id"], r["to_id"], r["label"]),
                *(r["mention_count"], r["notes"], r["last_seen_at"], r["created_at"]),
            ),
        )

    def _chunk_owner(self, r: Record) -> tuple[str, str, tuple[Any, ...]]:
        """The tenant column of chunk rows, its placeholder and its value, where they have it."""
        if self._chunks.chunks_by_tenant:
            return "user_id, ", "?, ", (r["user_id"],)
        return "", "", ()

    def chunk_state(self, conn: Conn, r: Record) -> bool:
        column, mark, owner = self._chunk_owner(r)
        return self._held(
            conn,
            f"INSERT INTO chunk_state ({column}session_id, created_at) VALUES ({mark}?, ?)",
            (*owner, session_pk(conn, self._d, scope_of(r), r["session"]), r["created_at"]),
        )

    def chunk(self, conn: Conn, r: Record) -> bool:
        d, scope, order = self._d, scope_of(r), self._chunks.episode_order
        last = conn.execute(
            d.sql(
                f"SELECT {order} AS n FROM episodes WHERE user_id = ? AND id = ? AND scope_id = ?"
            ),
            (scope.user_id, r["last_episode"], scope.scope_id),
        ).fetchone()
        if last is None:
            raise NotFound(f"episode {r['last_episode']!r} not found", id=r["last_episode"])
        column, mark, owner = self._chunk_owner(r)
        return self._held(
            conn,
            f"INSERT INTO chunk_ledger ({column}session_id, memory_id, last_hash, last_at,"
            " last_seq, last_index, messages, tokens, created_at)"
            f" VALUES ({mark}?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                *(*owner, session_pk(conn, d, scope, r["session"]), r["memory_id"]),
                *(r["last_hash"], r["last_at"], last["n"], r["last_index"], r["messages"]),
                *(r["tokens"], r["created_at"]),
            ),
        )

    def consolidation(self, conn: Conn, r: Record) -> bool:
        d = self._d
        if owned(conn, d, "consolidations", r["id"], r):
            return False
        sql = self._layout.raced(
            "INSERT INTO consolidations (id, user_id, scope_id, session_id, summary_id, report,"
            f" snapshot, created_at, reverted_at) VALUES (?, ?, ?, ?, ?, {d.json_param},"
            f" {d.json_param}, ?, ?)"
        )
        session = session_pk(conn, d, scope_of(r), r["session"])
        return (
            conn.execute(
                d.sql(sql),
                (
                    *(r["id"], r["user_id"], r["scope_id"], session, r["summary_id"]),
                    *(d.dump_json(r["report"]), d.dump_json(r["snapshot"])),
                    *(r["created_at"], r["reverted_at"]),
                ),
            ).rowcount
            == 1
        )

    def variable(self, conn: Conn, r: Record) -> bool:
        d = self._d
        return self._held(
            conn,
            "INSERT INTO variables (user_id, scope_id, name, value, type, updated_at)"
            f" VALUES (?, ?, ?, {d.json_param}, ?, ?)",
            (
                *(r["user_id"], r["scope_id"], r["name"], d.dump_json(r["value"])),
                *(r["type"], r["updated_at"]),
            ),
        )

    def usage(self, conn: Conn, r: Record) -> bool:
        return self._held(
            conn,
            "INSERT INTO token_usage (user_id, scope_id, prompt_tokens, completion_tokens,"
            " requests, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
            (
                *(r["user_id"], r["scope_id"], r["prompt_tokens"], r["completion_tokens"]),
                *(r["requests"], r["updated_at"]),
            ),
        )

    def schedule(self, conn: Conn, r: Record) -> bool:
        d = self._d
        return self._held(  # last_job_id stays unset: job ids do not travel (see the port)
            conn,
            "INSERT INTO dreaming_schedules (user_id, scope_id, enabled, interval_ms,"
            " next_run_at, settings, last_run_at, sweeps, created_at, updated_at)"
            f" VALUES (?, ?, ?, ?, ?, {d.json_param}, ?, ?, ?, ?)",
            (
                *(r["user_id"], r["scope_id"], bool(r["enabled"]), r["interval_ms"]),
                *(r["next_run_at"], d.dump_json(_object(r["settings"])), r["last_run_at"]),
                *(r["sweeps"], r["created_at"], r["updated_at"]),
            ),
        )

    def scope_config(self, conn: Conn, r: Record) -> bool:
        d = self._d
        return self._held(
            conn,
            "INSERT INTO scope_configs (user_id, scope_id, config, updated_at)"
            f" VALUES (?, ?, {d.json_param}, ?)",
            (r["user_id"], r["scope_id"], d.dump_json(_object(r["config"])), r["updated_at"]),
        )

    def job(self, conn: Conn, r: Record) -> bool:
        d, layout = self._d, self._layout
        payload = d.dump_json(r["payload"])
        if layout.job_held(conn, r, payload):
            return False
        result = None if r["result"] is None else d.dump_json(r["result"])
        row = conn.execute(
            d.sql(
                "INSERT INTO jobs (kind, user_id, scope_id, payload, state, attempts,"
                " max_attempts, last_error, run_after, created_at, updated_at, result)"
                f" VALUES (?, ?, ?, {d.json_param}, 'pending', ?, ?, ?, ?, ?, ?, {d.json_param})"
                " RETURNING id"
            ),
            (
                *(r["job_kind"], r["user_id"], r["scope_id"], payload, r["attempts"]),
                *(r["max_attempts"], r["last_error"], r["run_after"], r["created_at"]),
                *(r["updated_at"], result),
            ),
        ).fetchone()
        owner = (r["user_id"],) if layout.steps_by_tenant else ()
        column, mark = ("user_id, ", "?, ") if owner else ("", "")
        for step, s in r["steps"].items():
            conn.execute(
                d.sql(
                    f"INSERT INTO job_steps ({column}job_id, step, status, detail, calls,"
                    f" prompt_tokens, completion_tokens, created_at)"
                    f" VALUES ({mark}?, ?, ?, ?, ?, ?, ?, ?)"
                ),
                (
                    *(*owner, row["id"], step, s["status"], s["detail"], s["calls"]),
                    *(s["prompt_tokens"], s["completion_tokens"], s["created_at"]),
                ),
            )
        return True


def import_records(
    conn: Conn,
    d: Dialect,
    layout: ImportLayout,
    chunks: ChunkLayout,
    kind: str,
    records: Sequence[Record],
) -> list[int]:
    """See ``AdminWrites.import_records``."""
    writer = _Writers(d, layout, chunks).all().get(kind)
    if writer is None:
        raise InvalidInput(f"unknown record kind {kind!r}")
    fields = set(RECORD_FIELDS[kind])
    malformed: tuple[type[Exception], ...] = (KeyError, TypeError, ValueError, *layout.malformed)
    written = []
    for position, record in enumerate(records):
        if not isinstance(record, dict) or set(record) != fields:
            keys = sorted(record) if isinstance(record, dict) else type(record).__name__
            raise InvalidInput(f"{kind} record {position}: fields {keys} are not the export's")
        try:
            inserted = writer(conn, record)
        except malformed as exc:
            raise InvalidInput(f"{kind} record {position} is malformed: {exc}") from exc
        if inserted:
            written.append(position)
    return written
