"""Backups of a PostgreSQL store as one file, and restoring one into an empty database.

A backup is every table's rows (``to_jsonb``) read in one ``REPEATABLE READ`` snapshot, so it
is consistent while others write, written as JSON lines: a header (format, schema version),
then one ``{"table", "row"}`` line per row, parents before children. ``restore`` migrates the
target to the same version, inserts the rows with their own ids and moves the identity
sequences past them. (``pg_dump`` is the operator's tool for whole-cluster backups; this one
needs no server-side binaries and restores into any schema.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from omoide.errors import InvalidInput, MigrationError
from omoide.store import files
from omoide.store.postgres import migrate
from omoide.store.postgres.db import Conn

FORMAT = "omoide-postgres-backup/1"
# Parents before children, so foreign keys hold while restoring.
TABLES = (
    "meta", "projects", "sessions", "episodes", "memories", "memory_sources", "history",
    "memory_vectors", "jobs", "job_steps", "entities", "relationships", "entity_episodes",
    "entity_vectors", "variables", "token_usage", "chunk_state", "chunk_ledger", "consolidations",
    "dreaming_schedules", "scope_configs",
)  # fmt: skip
_IDENTITY = (
    ("projects", "id"), ("sessions", "id"), ("episodes", "seq"), ("memories", "seq"),
    ("history", "id"), ("jobs", "id"), ("entities", "seq"), ("relationships", "seq"),
    ("chunk_ledger", "id"), ("consolidations", "seq"),
)  # fmt: skip
_DERIVED = {"memories": ("tsv", "doc_len")}  # recomputed by trigger on restore


def write(conn: Conn, dest: Path) -> None:
    """Write a backup of the database ``conn`` is on to ``dest`` (which must not exist)."""
    dest = dest.expanduser()
    if dest.exists() or dest.is_symlink():
        raise InvalidInput(f"{dest} already exists; choose a new path")
    partial = dest.with_name(dest.name + ".partial")
    files.create_new_private(partial)  # a planted symlink there is removed, never followed
    with conn.transaction():
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        header = {"format": FORMAT, "version": migrate.current_version(conn)}
        with partial.open("w", encoding="utf-8") as out:
            out.write(json.dumps(header) + "\n")
            for table in TABLES:
                drop = _DERIVED.get(table, ())
                with conn.cursor(name=f"backup_{table}") as cursor:
                    cursor.execute(f"SELECT to_jsonb(t) AS row FROM {table} t")
                    for record in cursor:
                        row = {k: v for k, v in record["row"].items() if k not in drop}
                        out.write(json.dumps({"table": table, "row": row}) + "\n")
    partial.rename(dest)


def restore(conn: Conn, src: Path) -> None:
    """Load the backup ``src`` into the empty database ``conn`` is on, in one transaction."""
    with src.open(encoding="utf-8") as lines:
        header = json.loads(lines.readline() or "{}")
        if header.get("format") != FORMAT:
            raise InvalidInput(f"{src} is not an omoide PostgreSQL backup")
        migrate.migrate(conn, upto=int(header["version"]))
        if migrate.current_version(conn) != header["version"]:
            raise MigrationError(f"cannot restore a version {header['version']} backup here")
        with conn.transaction():
            for line in lines:
                entry = json.loads(line)
                _insert(conn, entry["table"], entry["row"])
            for table, column in _identities(conn):
                conn.execute(
                    f"SELECT setval(pg_get_serial_sequence('{table}', '{column}'),"
                    f" greatest((SELECT max({column}) FROM {table}), 1))"
                )
    migrate.migrate(conn)


def _identities(conn: Conn) -> list[tuple[str, str]]:
    """The identity columns the schema has at the backup's version (``consolidations.seq``
    came with version 2)."""
    present = conn.execute(
        "SELECT table_name, column_name FROM information_schema.columns"
        " WHERE table_schema = current_schema() AND is_identity = 'YES'"
    ).fetchall()
    have = {(r["table_name"], r["column_name"]) for r in present}
    return [pair for pair in _IDENTITY if pair in have]


def _insert(conn: Conn, table: str, row: dict[str, Any]) -> None:
    if table not in TABLES:
        raise InvalidInput(f"unknown table {table!r} in backup")
    columns = ", ".join(f'"{c}"' for c in row if c.replace("_", "").isalnum())
    conn.execute(
        f"INSERT INTO {table} ({columns}) OVERRIDING SYSTEM VALUE SELECT {columns}"
        f" FROM jsonb_populate_record(NULL::{table}, %s::jsonb)",
        (json.dumps(row),),
    )
