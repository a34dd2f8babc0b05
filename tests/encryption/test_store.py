"""The SQLite file encrypted with SQLCipher: no plaintext in the file, its WAL or a backup;
searches work; a wrong, missing or unneeded key is a clear error at open; settings aliases."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from omoide import Memory
from omoide.config import load_settings
from omoide.errors import InvalidInput, StoreError
from omoide.store import backup, open_store
from tests.encryption.conftest import SENTENCE, holds_plaintext

KEY = "correct horse battery staple"
ROOT = Path(__file__).resolve().parents[2]


def _memory(db: Path, key: str | None = KEY) -> Memory:
    settings = load_settings(embedder="hash", encryption_key=key, data_dir=db.parent)
    return Memory(db, settings=settings, workers=0)


def test_the_database_and_its_wal_hold_no_plaintext_and_search_works(tmp_path: Path) -> None:
    plain_db, secret_db = tmp_path / "plain.db", tmp_path / "secret.db"
    for db, key in ((plain_db, None), (secret_db, KEY)):
        memory = _memory(db, key)
        memory.add(SENTENCE.decode(), user_id="alice")
        # Still open: the rows sit in the WAL, not yet checkpointed into the file.
        wal = db.with_name(db.name + "-wal")
        assert wal.stat().st_size > 0
        if key is None:  # the check below would see the sentence if it were there
            assert holds_plaintext(wal) or holds_plaintext(db)
        else:
            assert not holds_plaintext(wal) and not holds_plaintext(db)
            assert not holds_plaintext(wal, b"walrus") and not holds_plaintext(db, b"alice")
        for recipe in ("keyword", "vector", "hybrid"):
            hits = memory.search("violet walrus", user_id="alice", recipe=recipe).hits
            assert hits and hits[0].memory.text == SENTENCE.decode(), recipe
        memory.close()
    assert not holds_plaintext(secret_db) and secret_db.read_bytes()[:16] != b"SQLite format 3\0"


def test_a_backup_is_encrypted_with_the_same_key(tmp_path: Path) -> None:
    db, copy = tmp_path / "secret.db", tmp_path / "backup.db"
    with _memory(db) as memory:
        memory.add(SENTENCE.decode(), user_id="alice")
        backup(db, copy, encryption_key=KEY)
    assert copy.stat().st_size > 0 and not holds_plaintext(copy)
    with pytest.raises(StoreError, match="encrypted"):
        open_store(copy).close()
    store = open_store(copy, encryption_key=KEY)
    try:
        assert store.admin.stats()["memories"] == 1
    finally:
        store.close()


def test_the_file_opens_with_the_passphrase_in_plain_sqlcipher(tmp_path: Path) -> None:
    """The key derived once per process is SQLCipher's own: other SQLCipher tools open it."""
    import sqlcipher3

    db = tmp_path / "secret.db"
    with _memory(db) as memory:
        memory.add("interoperable", user_id="alice")
    conn = sqlcipher3.connect(str(db))
    conn.execute(f"PRAGMA key = '{KEY}'")
    assert conn.execute("SELECT text FROM memories").fetchall() == [("interoperable",)]
    conn.close()


def test_a_wrong_missing_or_unneeded_key_is_a_clear_error_at_open(tmp_path: Path) -> None:
    db, plain = tmp_path / "secret.db", tmp_path / "plain.db"
    _memory(db).close()
    _memory(plain, None).close()
    with pytest.raises(StoreError, match="wrong encryption key") as wrong:
        open_store(db, encryption_key="not the key")
    assert "not the key" not in str(wrong.value)
    with pytest.raises(StoreError, match=r"is encrypted.*set OMOIDE_ENCRYPTION_KEY"):
        open_store(db)
    with pytest.raises(StoreError, match="not encrypted; run `omoide encrypt`"):
        open_store(plain, encryption_key=KEY)
    assert sqlite3.connect(plain).execute("PRAGMA user_version").fetchone()[0] > 0


def test_a_key_without_sqlcipher_installed_is_a_clear_error(tmp_path: Path) -> None:
    code = (
        "import sys; sys.modules['sqlcipher3'] = None\n"  # as if the extra were not installed
        "from omoide.store import open_store\n"
        f"open_store({str(tmp_path / 'x.db')!r}, encryption_key='k')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode != 0
    assert "SQLCipher is missing" in done.stderr and "omoide[encryption]" in done.stderr


def test_jiuwen_names_map_onto_the_key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("OMOIDE_ENCRYPTION_KEY", "OMOIDE_ENCRYPTION_CODEC"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MEMORY_CODEC", "AES")
    monkeypatch.setenv("AES_KEY", "from-jiuwen")
    assert load_settings(home=tmp_path).store.encryption_passphrase == "from-jiuwen"
    monkeypatch.delenv("AES_KEY")
    with pytest.raises(InvalidInput, match="MEMORY_CODEC=aes needs the key"):
        _ = load_settings(home=tmp_path).store.encryption_passphrase
    monkeypatch.setenv("MEMORY_CODEC", "sm4")
    with pytest.raises(InvalidInput, match="SM4 is not supported: use aes"):
        load_settings(home=tmp_path)
    monkeypatch.setenv("MEMORY_CODEC", "none")
    assert load_settings(home=tmp_path).store.encryption_passphrase is None
