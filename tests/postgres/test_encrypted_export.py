"""With OMOIDE_ENCRYPTION_KEY a PostgreSQL store's exports are encrypted like SQLite's (the
database itself is the server's to encrypt), and they import into an encrypted SQLite file."""

from __future__ import annotations

from pathlib import Path

import pytest

from omoide import Memory
from omoide.config import Settings
from omoide.embed import HashEmbedder
from omoide.engine.transfer import sealed
from omoide.errors import InvalidInput
from omoide.store import change_encryption

KEY = "postgres export passphrase"
TEXT = "the lighthouse keeper paints the stairs blue"


def test_an_export_from_postgres_is_encrypted_and_imports_into_sqlite(
    tmp_path: Path, pg_url: str
) -> None:
    pytest.importorskip("sqlcipher3", reason="the encryption extra is not installed")
    export = tmp_path / "pg.jsonl"
    settings = Settings(db_url=pg_url, encryption_key=KEY)
    with Memory(settings=settings, embedder=HashEmbedder(), workers=0) as postgres:
        postgres.add(TEXT, user_id="alice")
        postgres.export(export)
    assert sealed.is_sealed(export) and b"lighthouse" not in export.read_bytes()
    local = Settings(encryption_key=KEY)
    with Memory(tmp_path / "copy.db", settings=local, embedder=HashEmbedder(), workers=0) as copy:
        assert copy.import_file(export).records["memory"] == 1
        assert copy.search("lighthouse", user_id="alice").hits[0].memory.text == TEXT


def test_encrypt_and_rekey_refuse_a_postgres_url(pg_url: str) -> None:
    with pytest.raises(InvalidInput, match="disk or tablespace encryption and TLS"):
        change_encryption(pg_url, None, KEY)
