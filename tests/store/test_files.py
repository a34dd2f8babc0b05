"""Files that hold memories are private to their owner (issue 15, point 6).

Other local users could read every conversation: the database was created 0644 in a 0755
``~/.omoide``. ``omoide.store.files`` creates directories 0700 and files 0600; SQLite gives the
WAL and shared-memory files the database file's permissions.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from omoide import Memory
from omoide.embed import HashEmbedder
from omoide.store.files import create_private, prepare_database, private_dir, private_umask


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(autouse=True)
def default_umask() -> Iterator[None]:
    """The umask most systems have, whatever the test runner's is; restored after."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_new_directories_are_0700_with_their_parents(tmp_path: Path) -> None:
    private_dir(tmp_path / "a" / "b" / "c")
    for path in (tmp_path / "a", tmp_path / "a" / "b", tmp_path / "a" / "b" / "c"):
        assert _mode(path) == 0o700
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    private_dir(shared)
    assert _mode(shared) == 0o755  # an existing directory is the owner's choice


def test_a_database_and_its_wal_and_shm_are_0600(tmp_path: Path) -> None:
    path = tmp_path / "data" / "omoide.db"
    prepare_database(path)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE t (x)")
    conn.execute("INSERT INTO t VALUES ('private')")
    conn.commit()
    try:
        assert _mode(tmp_path / "data") == 0o700
        for name in ("omoide.db", "omoide.db-wal", "omoide.db-shm"):
            assert _mode(tmp_path / "data" / name) == 0o600, name
    finally:
        conn.close()


def test_old_world_readable_files_are_tightened(tmp_path: Path) -> None:
    home = tmp_path / ".omoide"
    home.mkdir(mode=0o755)
    path = home / "omoide.db"
    sqlite3.connect(path).close()
    (home / "omoide.db-wal").write_bytes(b"")
    os.chmod(path, 0o644)
    prepare_database(path, default_dir=home)
    assert _mode(path) == 0o600 and _mode(home / "omoide.db-wal") == 0o600
    assert _mode(home) == 0o700  # the default data directory is omoide's own


def test_a_backup_destination_created_private_is_accepted_by_vacuum_into(tmp_path: Path) -> None:
    source = tmp_path / "src.db"
    conn = sqlite3.connect(source)
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    dest = tmp_path / "backups" / "copy.db"
    create_private(dest)
    conn.execute("VACUUM INTO ?", (str(dest),))
    conn.close()
    assert _mode(dest) == 0o600
    assert sqlite3.connect(dest).execute("SELECT count(*) FROM t").fetchone() == (0,)


def test_the_private_umask_only_adds_restrictions() -> None:
    os.umask(0o027)
    private_umask()
    assert os.umask(0o022) == 0o077


def test_a_library_memory_creates_a_private_database(tmp_path: Path) -> None:
    path = tmp_path / "lib" / "omoide.db"
    with Memory(path, embedder=HashEmbedder(), workers=0) as memory:
        memory.add("a private memory")
        assert _mode(tmp_path / "lib") == 0o700
        assert _mode(path) == 0o600
