"""The composition: services built alone from their collaborators, ``build_engine`` starting no
thread until ``start()``, ``Memory()`` reading the server's ``.env`` files, and the
extraction request the JiuwenMemory switches become. Real SQLite files, the hash embedder."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from omoide import InvalidInput, Memory
from omoide import store as seam
from omoide.config import Settings
from omoide.embed import HashEmbedder
from omoide.engine import ExtractionRequest, KnowledgeConfig
from omoide.engine.projects import ProjectService
from omoide.engine.search.service import SearchService
from omoide.engine.shared.embedding import Embedding
from omoide.store.protocol import NewMemory
from omoide.types import Scope
from omoide.wiring import build_engine


def _workers() -> int:
    return sum(t.name == "omoide-worker" and t.is_alive() for t in threading.enumerate())


def test_a_service_works_alone_over_its_collaborators(tmp_path: Path) -> None:
    store = seam.open_store(tmp_path / "alone.db")
    try:
        embedding = Embedding(store, HashEmbedder())
        vector = embedding.embed(["jasmine tea"])[0]  # records the database's embedder
        with store.transaction() as tx:
            item = tx.memories.insert_memory(Scope(), NewMemory(text="jasmine tea"), "test")
            tx.memories.put_vector(Scope(), item.id, vector)
        search = SearchService(store.memories, embedding, recipe="hybrid", max_text_chars=1000)
        hits = search.search("jasmine tea").hits
        assert [h.memory.id for h in hits] == [item.id]
        search.close()
    finally:
        store.close()


def test_create_project_creates_then_updates_through_the_one_project_api(
    tmp_path: Path,
) -> None:
    store = seam.open_store(tmp_path / "projects.db")
    try:
        projects = ProjectService(store.sessions, store)
        first = projects.create_project("garden", user_id="mei", description="veg")
        again = projects.create_project("garden", user_id="mei", isolated=True)
        assert (first.description, first.isolated) == ("veg", False)
        assert (again.description, again.isolated) == ("veg", True)  # description kept
        assert projects.list_projects(user_id="mei")[1] == 1
    finally:
        store.close()


def test_building_an_engine_starts_no_thread_until_start(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, embedder="hash", llm_base_url=None)
    before = _workers()
    engine = build_engine(settings, workers=2)
    try:
        assert _workers() == before
        engine.start()
        assert _workers() == before + 2
    finally:
        engine.close()
    assert _workers() == before


def test_memory_reads_the_env_files_the_server_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text(
        f"OMOIDE_DATA_DIR={tmp_path / 'data'}\nOMOIDE_MAX_TEXT_CHARS=20\n"
    )
    with Memory(embedder=HashEmbedder(), workers=0) as memory:
        [item] = memory.add("short enough", infer=False)
        with pytest.raises(InvalidInput):
            memory.add("this text is longer than twenty characters", infer=False)
    # The memory is in the database of OMOIDE_DATA_DIR, whatever the backend puts there.
    with Memory(tmp_path / "data" / "omoide.db", embedder=HashEmbedder(), workers=0) as memory:
        assert memory.get(item.id).text == "short enough"


def test_knowledge_can_be_changed_on_a_live_memory(tmp_path: Path) -> None:
    settings = Settings(llm_base_url=None)
    with Memory(tmp_path / "k.db", embedder=HashEmbedder(), settings=settings, workers=0) as m:
        turns = [{"role": "user", "content": f"turn {n}"} for n in range(5)]
        m.add(turns, session_id="s", infer=False)
        assert len(m.context("turn", session_id="s").recent) == 5
        m.knowledge = KnowledgeConfig(recent_turns=2)
        assert m.knowledge.recent_turns == 2
        assert len(m.context("turn", session_id="s").recent) == 2


def test_the_jiuwen_switches_are_one_extraction_request() -> None:
    request = ExtractionRequest(summary=False, graph=False)
    assert [s for s in ("episodic", "semantic", "profile", "summary", "graph") if request.wants(s)]
    assert not request.wants("summary") and not request.wants("graph")
    assert not ExtractionRequest(long_term=False).wants("semantic")
