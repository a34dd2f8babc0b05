"""Migrations on PostgreSQL: numbered, forward-only, tracked in ``schema_migrations``, applied
once under an advisory lock however many servers start together; a Citus-ready schema."""

from __future__ import annotations

import threading

import psycopg
import pytest

from omoide.errors import MigrationError, StoreError
from omoide.store import open_store
from omoide.store.postgres import PostgresStore, apply_migrations, migrate, migration_status

WAIT_S = 60


def _applied(url: str) -> list[int]:
    with psycopg.connect(url) as conn:
        return [r[0] for r in conn.execute("SELECT version FROM schema_migrations ORDER BY 1")]


def test_a_fresh_schema_is_migrated_to_the_latest_version(pg_url: str) -> None:
    assert migration_status(pg_url)["version"] == 0
    store = PostgresStore(pg_url)
    try:
        latest = migrate.latest_version()
        assert store.admin.schema_version() == latest >= 1
        assert _applied(pg_url) == list(range(1, latest + 1))
        assert migration_status(pg_url) == {
            "path": store.location,
            "version": latest,
            "latest": latest,
            "pending": [],
        }
        assert apply_migrations(pg_url)["applied"] == []
    finally:
        store.close()


def test_servers_starting_together_migrate_once(pg_url: str) -> None:
    starting = threading.Barrier(4, timeout=WAIT_S)
    opened: list[PostgresStore] = []
    errors: list[BaseException] = []

    def start() -> None:
        try:
            starting.wait()
            opened.append(PostgresStore(pg_url, max_connections=2))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT_S)
    try:
        assert errors == [] and len(opened) == 4
        assert _applied(pg_url) == list(range(1, migrate.latest_version() + 1))
    finally:
        for store in opened:
            store.close()


def test_a_database_newer_than_the_code_is_refused(pg_url: str) -> None:
    PostgresStore(pg_url).close()
    with psycopg.connect(pg_url) as conn:
        conn.execute("INSERT INTO schema_migrations VALUES (999, '0999_future.sql', 0)")
    with pytest.raises(MigrationError):
        PostgresStore(pg_url)
    with pytest.raises(MigrationError):
        migration_status(pg_url)


def test_without_auto_migrate_an_empty_database_needs_migrate(pg_url: str) -> None:
    with pytest.raises(StoreError, match="omoide migrate"):
        PostgresStore(pg_url, auto_migrate=False)
    assert migration_status(pg_url)["version"] == 0  # and nothing was created
    apply_migrations(pg_url)
    PostgresStore(pg_url, auto_migrate=False).close()


def test_the_sqlalchemy_spellings_of_the_url_open_the_same_database(pg_url: str) -> None:
    for scheme in ("postgresql+psycopg://", "postgresql+asyncpg://", "postgres://"):
        store = open_store(pg_url.replace("postgresql://", scheme, 1))
        try:
            assert isinstance(store, PostgresStore)
            assert store.location.startswith("postgresql://")
        finally:
            store.close()


def _tenant_keys(conn: psycopg.Connection[tuple[object, ...]]) -> list[tuple[str, str, str]]:
    """(table, constraint or index, its columns) of every key of a table with ``user_id``."""
    found = conn.execute(
        """
        SELECT t.relname, i.relname, pg_get_indexdef(x.indexrelid)
        FROM pg_index x JOIN pg_class t ON t.oid = x.indrelid
        JOIN pg_class i ON i.oid = x.indexrelid
        JOIN pg_namespace n ON n.oid = t.relnamespace
        WHERE n.nspname = current_schema() AND x.indisunique
          AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = t.oid
                      AND a.attname = 'user_id' AND NOT a.attisdropped)
        """
    ).fetchall()
    return [(str(a), str(b), str(c)) for a, b, c in found]


def test_every_key_of_a_tenant_table_includes_user_id(pg_store: PostgresStore, pg_url: str) -> None:
    """What ``create_distributed_table(..., 'user_id')`` requires of primary, unique and
    foreign keys (Citus); checked on the catalog, not assumed."""
    with psycopg.connect(pg_url) as conn:
        keys = _tenant_keys(conn)
        foreign = conn.execute(
            "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid)"
            " FROM pg_constraint WHERE contype = 'f'"
            " AND connamespace = current_schema()::regnamespace"
        ).fetchall()
    assert len(keys) >= 18
    assert [k for k in keys if "(user_id" not in k[2]] == []
    assert foreign and [f for f in foreign if "(user_id," not in str(f[2])] == []
