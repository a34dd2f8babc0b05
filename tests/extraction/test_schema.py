"""Migration 0003 on a database that already has jobs."""

from __future__ import annotations

from pathlib import Path

import pytest

from omoide.store.sqlite import SQLiteStore, migrate
from omoide.store.sqlite.store import connect
from omoide.types import Scope

pytestmark = pytest.mark.sqlite_only(
    "SQLite migration 0003 (PostgreSQL migrations: tests/postgres/test_migrations.py)"
)


def test_0003_upgrades_a_database_with_jobs(tmp_path: Path) -> None:
    path = tmp_path / "v2.db"
    conn = connect(path)
    assert migrate.migrate(conn, upto=2) == ["0001_init.sql", "0002_jobs.sql"]
    conn.execute(
        "INSERT INTO jobs (kind, user_id, scope_id, payload, run_after, created_at, updated_at)"
        " VALUES ('embed', 'u', 's', '{}', 0, 0, 0)"
    )
    conn.close()
    store = SQLiteStore(path)
    try:
        assert store.admin.schema_version() == migrate.latest_version()
        [job] = store.jobs.list_jobs(None, None, 10, 0)
        assert job.kind == "embed" and job.result is None
        assert store.graph.list_entities(Scope(user_id="u", scope_id="s"), None, 10, 0) == ([], 0)
        assert store.variables.token_usage(None).total_tokens == 0
    finally:
        store.close()
