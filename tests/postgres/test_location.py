"""A PostgreSQL URL reaches the PostgreSQL backend from every entry point: ``Memory(url)``,
``OMOIDE_DB_URL`` / JiuwenMemory's ``DB_URL`` (also in SQLAlchemy spelling), never a local file
named after the URL."""

from __future__ import annotations

from pathlib import Path

import pytest

from omoide import Memory
from omoide.config import Settings
from omoide.embed import HashEmbedder
from tests.postgres.server import fresh_schema


def test_memory_given_a_url_stores_in_postgres(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    url = fresh_schema()
    with Memory(url, embedder=HashEmbedder(), workers=0) as memory:
        memory.add("the lighthouse keeper paints boats", user_id="u")
        assert memory.store.location.startswith("postgresql")
    assert list(tmp_path.iterdir()) == []  # no SQLite tree named "postgresql:"
    with Memory(url, embedder=HashEmbedder(), workers=0) as again:
        hits = again.search("lighthouse", user_id="u", recipe="keyword").hits
        assert [h.memory.text for h in hits] == ["the lighthouse keeper paints boats"]


@pytest.mark.parametrize("scheme", ["postgresql+psycopg://", "postgresql+asyncpg://"])
def test_db_url_in_sqlalchemy_spelling_opens_postgres(
    scheme: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    url = fresh_schema().replace("postgresql://", scheme, 1)
    settings = Settings(db_url=url, data_dir=tmp_path / "data")
    with Memory(settings=settings, embedder=HashEmbedder(), workers=0) as memory:
        memory.add("a memory kept in postgres", user_id="u")
        assert memory.get_all(user_id="u").total == 1
    assert not (tmp_path / "data").exists()
