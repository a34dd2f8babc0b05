"""Forward-only migrations on PRAGMA user_version."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from omoide.errors import MigrationError, StoreError
from omoide.store.sqlite import SQLiteStore, migrate
from omoide.store.sqlite.db import connect


def _shape(path: Path) -> set[tuple[str, str]]:
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute(
            "SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"
        ).fetchall()
        columns = set()
        for _, table in conn.execute("SELECT type, name FROM sqlite_master WHERE type='table'"):
            for col in conn.execute(f"PRAGMA table_info('{table}')"):
                columns.add((table, f"{col[1]}:{col[2]}:{col[3]}:{col[4]}"))
        return set(rows) | columns
    finally:
        conn.close()


def test_fresh_database_is_built_whole_and_stamped(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "fresh.db")
    assert store.admin.schema_version() == migrate.latest_version()
    store.close()


def test_schema_sql_equals_all_migrations_in_order(tmp_path: Path) -> None:
    SQLiteStore(tmp_path / "whole.db").close()
    conn = connect(tmp_path / "stepwise.db")
    for m in migrate.load_migrations():
        migrate._run_in_transaction(conn, m.sql, m.version)
    conn.close()
    assert _shape(tmp_path / "whole.db") == _shape(tmp_path / "stepwise.db")


def test_old_database_upgrades_and_keeps_its_data(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = connect(path)
    assert migrate.migrate(conn, upto=1) == ["0001_init.sql"]
    conn.execute(
        "INSERT INTO memories (id, user_id, scope_id, type, text, tenant_token, valid_from,"
        " created_at, updated_at) VALUES ('m1', 'u', 's', 'raw', 'kept tea', 't1', 1, 1, 1)"
    )
    conn.close()
    store = SQLiteStore(path)
    assert store.admin.schema_version() == migrate.latest_version()
    assert store.admin.stats()["memories"] == 1 and store.admin.stats()["jobs"] == 0
    store.close()


def test_outdated_schema_refused_without_auto_migrate(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = connect(path)
    migrate.migrate(conn, upto=1)
    conn.close()
    with pytest.raises(StoreError, match="omoide migrate"):
        SQLiteStore(path, auto_migrate=False)


def test_newer_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "future.db"
    SQLiteStore(path).close()
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {migrate.latest_version() + 1}")
    conn.close()
    with pytest.raises(MigrationError, match="newer than this omoide"):
        SQLiteStore(path)


def test_failed_migration_leaves_version_unchanged(tmp_path: Path) -> None:
    conn = connect(tmp_path / "x.db")
    migrate.migrate(conn, upto=1)
    with pytest.raises(MigrationError):
        migrate._run_in_transaction(conn, "CREATE TABLE broken (;", 2)
    assert migrate.current_version(conn) == 1
    conn.close()
