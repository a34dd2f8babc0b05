"""``AdminReads.export_records``: the queries and conversions of the kinds both schemas lay out
alike. Each backend reads them in its own snapshot and batches (SQLite: a connection of its
own; PostgreSQL: server-side cursors) and adds the kinds it lays out its own way (memories,
history, entities, jobs). Names sort by code point (``Dialect.binary``), insertion order is
the tables' row order (``order``), so both backends write the same records, field for field
(``omoide.store.ports.transfer``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from omoide.store.sql.dialect import Dialect

Record = dict[str, Any]
Convert = Callable[[Any], Record]


def tenant(alias: str, user_id: str | None, scope_id: str | None) -> tuple[str, list[Any]]:
    """The selection as a condition on ``alias``, and its parameters."""
    parts, params = ["1 = 1"], []
    if user_id is not None:
        parts.append(f"{alias}.user_id = ?")
        params.append(user_id)
    if scope_id is not None:
        parts.append(f"{alias}.scope_id = ?")
        params.append(scope_id)
    return " AND ".join(parts), params


def queries(d: Dialect, order: str, chunks_by_tenant: bool) -> dict[str, str]:
    """Each shared kind's query, ending in its tenant condition ``{where}`` on the alias it
    names and its order. ``order``: the column of the tables' insertion order."""
    b = d.binary
    chunk_owner = "s.user_id = c.user_id AND " if chunks_by_tenant else ""
    episode_owner = "e.user_id = c.user_id AND " if chunks_by_tenant else ""
    return {
        "project": "SELECT p.user_id, p.scope_id, p.name, p.description, p.isolated, p.colour,"
        " p.icon, p.notes, p.system_prompt, p.created_at, p.updated_at FROM projects p"
        " WHERE {p} ORDER BY p.id",
        "session": "SELECT s.user_id, s.scope_id, s.external_id AS id, s.name, p.name AS project,"
        " s.metadata, s.created_at, s.updated_at FROM sessions s LEFT JOIN projects p"
        " ON p.user_id = s.user_id AND p.id = s.project_id WHERE {s} ORDER BY s.id",
        "episode": "SELECT e.user_id, e.scope_id, e.id, s.external_id AS session, e.messages,"
        " e.created_at, e.access_count, e.last_accessed_at, e.consolidated_at,"
        " e.consolidation_id FROM episodes e JOIN sessions s ON s.user_id = e.user_id"
        f" AND s.id = e.session_id WHERE {{e}} ORDER BY e.{order}",
        "relationship": "SELECT r.user_id, r.scope_id, r.id, r.from_id, r.to_id, r.label,"
        " r.mention_count, r.notes, r.last_seen_at, r.created_at FROM relationships r"
        f" WHERE {{r}} ORDER BY r.{order}",
        "chunk_state": "SELECT s.user_id, s.scope_id, s.external_id AS session, c.created_at"
        f" FROM chunk_state c JOIN sessions s ON {chunk_owner}s.id = c.session_id"
        " WHERE {s} ORDER BY c.session_id",
        "chunk": "SELECT s.user_id, s.scope_id, s.external_id AS session, c.memory_id,"
        f" c.last_hash, c.last_at, (SELECT e.id FROM episodes e WHERE {episode_owner}"
        f"e.{order} = c.last_seq) AS last_episode, c.last_index, c.messages, c.tokens,"
        f" c.created_at FROM chunk_ledger c JOIN sessions s ON {chunk_owner}s.id = c.session_id"
        " WHERE {s} ORDER BY c.id",
        "consolidation": "SELECT c.user_id, c.scope_id, c.id, s.external_id AS session,"
        " c.summary_id, c.report, c.snapshot, c.created_at, c.reverted_at FROM consolidations c"
        " JOIN sessions s ON s.user_id = c.user_id AND s.id = c.session_id WHERE {c}"
        f" ORDER BY c.{order}",
        "variable": "SELECT v.user_id, v.scope_id, v.name, v.value, v.type, v.updated_at"
        f" FROM variables v WHERE {{v}} ORDER BY v.user_id{b}, v.scope_id{b}, v.name{b}",
        "usage": "SELECT u.user_id, u.scope_id, u.prompt_tokens, u.completion_tokens, u.requests,"
        f" u.updated_at FROM token_usage u WHERE {{u}} ORDER BY u.user_id{b}, u.scope_id{b}",
        "schedule": "SELECT d.user_id, d.scope_id, d.enabled, d.interval_ms, d.next_run_at,"
        " d.settings, d.last_run_at, d.sweeps, d.created_at, d.updated_at FROM dreaming_schedules d"
        f" WHERE {{d}} ORDER BY d.user_id{b}, d.scope_id{b}",
        "scope_config": "SELECT c.user_id, c.scope_id, c.config, c.updated_at FROM scope_configs c"
        f" WHERE {{c}} ORDER BY c.user_id{b}, c.scope_id{b}",
    }


def query(
    template: str, d: Dialect, user_id: str | None, scope_id: str | None
) -> tuple[str, list[Any]]:
    """``template`` with its tenant condition filled in (the one alias it names), in the
    dialect's placeholders, and its parameters."""
    alias = template[template.index("WHERE {") + len("WHERE {")]
    where, params = tenant(alias, user_id, scope_id)
    return d.sql(template.replace("{" + alias + "}", where)), params


def converters(d: Dialect) -> dict[str, Convert]:
    """How each shared kind's rows become records (JSON columns read back as values)."""

    def with_json(*keys: str) -> Convert:
        def convert(row: Any) -> Record:
            record = dict(row)
            for key in keys:
                if record[key] is not None:
                    record[key] = d.load_json(record[key])
            return record

        return convert

    def project(row: Any) -> Record:
        return {**dict(row), "isolated": bool(row["isolated"])}

    def schedule(row: Any) -> Record:
        settings = d.load_json(row["settings"])
        return {**dict(row), "enabled": bool(row["enabled"]), "settings": settings}

    plain = with_json()
    return {
        "project": project,
        "session": with_json("metadata"),
        "episode": with_json("messages"),
        "relationship": plain,
        "chunk_state": plain,
        "chunk": plain,
        "consolidation": with_json("report", "snapshot"),
        "variable": with_json("value"),
        "usage": plain,
        "schedule": schedule,
        "scope_config": with_json("config"),
    }
