"""The store's entry points by location (``omoide.store``): opening, migration status,
migrating and backing up without importing a backend. SQLite locations: a path or
``sqlite:///path``."""

from __future__ import annotations

from pathlib import Path

import pytest

from omoide.errors import InvalidInput, StoreError
from omoide.store import apply_migrations, backup, migration_status, open_store
from omoide.store.sqlite import migrate
from omoide.store.sqlite.db import connect
from tests.store.contract import ALICE, add


def test_every_spelling_of_a_location_opens_the_same_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    first = open_store(tmp_path / "data" / "omoide.db")  # creates the folder too
    memory_id = add(first, ALICE, "tea")
    first.close()
    for location in (
        str(tmp_path / "data" / "omoide.db"),
        f"sqlite:///{tmp_path}/data/omoide.db",  # sqlite:////abs/path
        "sqlite:///data/omoide.db",  # relative to the working directory
        "data/omoide.db",
    ):
        store = open_store(location)
        try:
            assert store.memories.get_memories(ALICE, [memory_id]), location
        finally:
            store.close()


@pytest.mark.parametrize("location", ["", "   ", "mysql://db/x", "sqlite://relative", "sqlite:///"])
def test_a_location_that_names_no_database_is_invalid(location: str) -> None:
    with pytest.raises(InvalidInput):
        open_store(location)


def test_without_auto_migrate_a_new_database_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="omoide migrate"):
        open_store(tmp_path / "new.db", auto_migrate=False)


def test_migration_status_creates_nothing_and_apply_brings_it_up_to_date(
    tmp_path: Path,
) -> None:
    path = tmp_path / "m.db"
    latest = migrate.latest_version()
    assert migration_status(path) == {
        "path": str(path),
        "version": 0,
        "latest": latest,
        "pending": ["schema.sql"],
    }
    assert not path.exists()
    done = apply_migrations(path)
    assert (done["version"], done["latest"], done["applied"]) == (latest, latest, ["schema.sql"])
    assert migration_status(path)["pending"] == []
    assert apply_migrations(path)["applied"] == []


def test_apply_migrations_upgrades_an_old_database(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = connect(path)
    migrate.migrate(conn, upto=1)
    conn.close()
    status = migration_status(path)
    assert status["version"] == 1 and len(status["pending"]) == migrate.latest_version() - 1
    assert apply_migrations(path)["applied"] == status["pending"]
    store = open_store(path, auto_migrate=False)
    store.close()


def test_backup_by_location_copies_everything_and_never_overwrites(tmp_path: Path) -> None:
    source = tmp_path / "live.db"
    store = open_store(source)
    memory_id = add(store, ALICE, "backed up tea")
    store.close()
    backup(f"sqlite:///{source}", tmp_path / "copies" / "one.db")
    copy = open_store(tmp_path / "copies" / "one.db")
    try:
        assert copy.memories.get_memories(ALICE, [memory_id])[0].text == "backed up tea"
    finally:
        copy.close()
    with pytest.raises(InvalidInput):
        backup(source, tmp_path / "copies" / "one.db")
