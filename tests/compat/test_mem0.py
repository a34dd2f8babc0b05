# ruff: noqa: E501, T201 (the quick starts are mem0's code, verbatim: its long lines and print)
"""mem0's documented quick start runs unchanged on ``omoide.compat.mem0`` (only the import
differs), and its results read as mem0's: ``result["results"]`` of dicts with ``id``,
``memory``, ``score``, ``metadata``, ``created_at``. Real SQLite in a tmp dir; the model-free
hash embedder through the environment, as a user would configure it (``OMOIDE_EMBEDDER``)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import omoide
from omoide.compat.mem0 import Memory
from omoide.compat.mem0.config import settings_from_config
from omoide.config import load_settings
from omoide.embed.protocol import Embedder
from omoide.errors import InvalidInput, NotFound
from omoide.llm.client import OpenAICompatLLM
from tests.extraction.conftest import script
from tests.fakes import FakeLLMServer

MEM0_KEYS = {"id", "memory", "metadata", "created_at"}


@pytest.fixture(autouse=True)
def _omoide_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``Memory()`` with no arguments: its data dir in tmp, no LLM, the hash embedder."""
    monkeypatch.setenv("OMOIDE_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("OMOIDE_EMBEDDER", "hash")
    for name in ("OMOIDE_LLM_BASE_URL", "API_BASE", "OMOIDE_LLM_MODEL", "MODEL_NAME"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def m() -> Iterator[Memory]:
    memory = Memory()
    yield memory
    memory.close()


# No LLM here: infer=True (mem0's default) stores the messages and warns that it extracted
# nothing (test_mem0_semantics.py checks the warning).
@pytest.mark.filterwarnings("ignore:infer=True stored the messages:UserWarning")
def test_mem0_python_quickstart_unchanged(capsys: pytest.CaptureFixture[str]) -> None:
    # docs.mem0.ai/open-source/python-quickstart, steps 2-4, verbatim but for the import.
    # fmt: off
    m = Memory()

    messages = [
        {"role": "user", "content": "Hi, I'm Alex. I love basketball and gaming."},
        {"role": "assistant", "content": "Hey Alex! I'll remember your interests."}
    ]
    m.add(messages, user_id="alex")

    results = m.search("What do you know about me?", filters={"user_id": "alex"})
    print(results)
    # fmt: on

    try:
        assert "basketball" in capsys.readouterr().out
        hits = results["results"]
        assert hits and all(MEM0_KEYS | {"score"} <= set(h) for h in hits)
        assert {h["user_id"] for h in hits} == {"alex"}
        assert "Hi, I'm Alex. I love basketball and gaming." in [h["memory"] for h in hits]
        assert all(0.0 <= h["score"] <= 1.0 for h in hits)
    finally:
        m.close()


@pytest.mark.filterwarnings("ignore:infer=True stored the messages:UserWarning")
def test_mem0_v0_quickstart_store_and_retrieve_unchanged() -> None:
    # docs.mem0.ai/v0x/open-source/python-quickstart, "Store a Memory" and "Retrieve
    # Memories", verbatim but for the import (and the API key, which omoide does not need).
    # fmt: off
    m = Memory()

    messages = [
        {"role": "user", "content": "I'm planning to watch a movie tonight. Any recommendations?"},
        {"role": "assistant", "content": "How about a thriller movies? They can be quite engaging."},
        {"role": "user", "content": "I'm not a big fan of thriller movies but I love sci-fi movies."},
        {"role": "assistant", "content": "Got it! I'll avoid thriller recommendations and suggest sci-fi movies in the future."}
    ]

    # Store inferred memories (default behavior)
    result = m.add(messages, user_id="alice", metadata={"category": "movie_recommendations"})

    # Store memories with agent and run context
    result = m.add(messages, user_id="alice", agent_id="movie-assistant", run_id="session-001", metadata={"category": "movie_recommendations"})

    # Get all memories
    all_memories = m.get_all(user_id="alice")

    # Get a single memory by ID
    specific_memory = m.get("892db2ae-06d9-49e5-8b3e-585ef9b85b8e")
    # fmt: on

    try:
        assert len(result["results"]) == 4
        assert all(r["event"] == "ADD" and set(r) >= MEM0_KEYS for r in result["results"])
        assert {(r["agent_id"], r["run_id"]) for r in result["results"]} == {
            ("movie-assistant", "session-001")
        }
        # agent_id is omoide's scope: alice's memories without an agent are the first four.
        assert len(all_memories["results"]) == 4
        first = all_memories["results"][0]
        assert first["metadata"]["category"] == "movie_recommendations"
        assert "agent_id" not in first and "run_id" not in first
        assert specific_memory is None  # the docs' example id exists nowhere, as in mem0
        with_agent = m.get_all(user_id="alice", agent_id="movie-assistant", run_id="session-001")
        assert len(with_agent["results"]) == 4
    finally:
        m.close()


def test_operations_by_id_need_no_user_id(m: Memory) -> None:
    added = m.add("I love sci-fi movies", user_id="alice", agent_id="movie-assistant", infer=False)
    memory_id = added["results"][0]["id"]

    got = m.get(memory_id)
    assert got is not None and got["memory"] == "I love sci-fi movies"
    assert got["user_id"] == "alice" and got["agent_id"] == "movie-assistant"

    assert m.update(memory_id=memory_id, data="I love fantasy movies now") == {
        "message": "Memory updated successfully!"
    }
    updated = m.get(memory_id)
    assert updated is not None and updated["memory"] == "I love fantasy movies now"

    assert m.delete(memory_id=memory_id) == {"message": "Memory deleted successfully!"}
    assert m.get(memory_id) is None
    events = m.history(memory_id=memory_id)
    assert [e["event"] for e in events] == ["ADD", "UPDATE", "DELETE"]
    assert events[1]["old_memory"] == "I love sci-fi movies"
    assert events[1]["new_memory"] == "I love fantasy movies now"
    assert events[2]["is_deleted"] is True


def test_unknown_ids_raise_not_found_which_is_mem0s_value_error(m: Memory) -> None:
    for call in (lambda: m.update("nope", data="x"), lambda: m.delete("nope")):
        with pytest.raises(NotFound, match="nope"):
            call()
        with pytest.raises(ValueError, match="nope"):  # what mem0 raises, and its users catch
            call()
    assert m.history("nope") == []  # mem0 reads its history table: no rows, no error


def test_raw_add_skips_system_and_empty_messages_as_mem0(m: Memory) -> None:
    messages = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "I like jasmine tea"},
        {"role": "user", "content": "  "},
        {"role": "assistant", "content": "Noted."},
    ]
    added = m.add(messages, user_id="alice", infer=False)["results"]
    assert [(r["memory"], r["role"], r["event"]) for r in added] == [
        ("I like jasmine tea", "user", "ADD"),
        ("Noted.", "assistant", "ADD"),
    ]
    assert m.add([{"role": "user", "content": ""}], user_id="alice", infer=False) == {"results": []}
    assert len(m.get_all(user_id="alice")["results"]) == 2


def test_history_entries_have_mem0s_keys(m: Memory) -> None:
    [added] = m.add({"role": "user", "content": "I like tea"}, user_id="alice", infer=False)[
        "results"
    ]
    m.update(added["id"], data="I like oolong tea")
    keys = {"id", "memory_id", "old_memory", "new_memory", "event", "created_at"}
    keys |= {"updated_at", "is_deleted", "actor_id", "role"}
    first, second = m.history(added["id"])
    assert set(first) == set(second) == keys
    assert (first["event"], first["updated_at"], first["role"]) == ("ADD", None, "user")
    assert second["event"] == "UPDATE" and second["updated_at"] is not None
    assert second["role"] == "user"
    m.delete(added["id"])
    assert [(e["event"], e["role"]) for e in m.history(added["id"])][-1] == ("DELETE", None)


def test_filters_are_a_plain_dict(m: Memory) -> None:
    m.add("I like jasmine tea", user_id="alice", metadata={"kind": "drink"}, infer=False)
    m.add("I like hiking", user_id="alice", metadata={"kind": "hobby"}, infer=False)
    m.add("I like oolong tea", user_id="bob", metadata={"kind": "drink"}, infer=False)

    hits = m.search("tea", filters={"user_id": "alice", "kind": "drink"})["results"]
    assert [h["memory"] for h in hits] == ["I like jasmine tea"]
    listed = m.get_all(filters={"user_id": "alice", "kind": "hobby"})["results"]
    assert [r["memory"] for r in listed] == ["I like hiking"]
    with pytest.raises(InvalidInput, match="filters"):
        m.search("tea", filters={"AND": [{"user_id": "alice"}]})


def test_run_id_is_the_session(m: Memory) -> None:
    m.add("turn one", user_id="alice", run_id="chat-1", infer=False)
    m.add("turn two", user_id="alice", run_id="chat-2", infer=False)
    only = m.search("turn", user_id="alice", run_id="chat-1")["results"]
    assert [h["memory"] for h in only] == ["turn one"]
    assert m.delete_all(user_id="alice", run_id="chat-1")["message"]
    assert [r["memory"] for r in m.get_all(user_id="alice")["results"]] == ["turn two"]


def test_errors_name_the_argument(m: Memory) -> None:
    with pytest.raises(InvalidInput, match=r"^user_id"):
        m.add("x", user_id="")
    with pytest.raises(InvalidInput, match=r"messages\[0\]\.content"):
        m.add([{"role": "user", "content": 3}], user_id="alice")
    with pytest.raises(InvalidInput, match="delete_all"):
        m.delete_all()
    with pytest.raises(TypeError, match=r"Memory\.add"):
        m.add("x", user_id="alice", colour="red")  # type: ignore[call-arg]


def test_a_threshold_that_is_not_a_finite_number_is_refused(m: Memory) -> None:
    """A NaN threshold compared false with every score: an empty result with no word, where
    the HTTP doors answer 422."""
    m.add("I like jasmine tea", user_id="alice", infer=False)
    for bad in (math.nan, math.inf, -math.inf):
        with pytest.raises(InvalidInput, match="threshold must be a finite number"):
            m.search("tea", user_id="alice", threshold=bad)
    assert m.search("tea", user_id="alice", threshold=-1.0)["results"]  # finite: a plain cut
    # a numpy number (a score read back from a numpy array) is a number too
    assert m.search("tea", user_id="alice", threshold=np.float32(0.0))["results"]
    assert m.search("tea", user_id="alice", threshold=np.int64(0))["results"]


def test_from_config_maps_llm_embedder_and_path(tmp_path: Path) -> None:
    config = {
        "llm": {"provider": "ollama", "config": {"model": "qwen2.5:3b"}},
        "embedder": {"provider": "huggingface", "config": {"model": "all-MiniLM-L6-v2"}},
        "history_db_path": str(tmp_path / "mem0.db"),
    }
    settings, path = settings_from_config(config, load_settings())
    assert settings.llm.base_url == "http://localhost:11434/v1"
    assert settings.llm.model == "qwen2.5:3b"
    assert settings.embed.embedder == "local" and settings.embed.model == "all-MiniLM-L6-v2"
    assert path == tmp_path / "mem0.db"

    with pytest.warns(UserWarning, match="vector_store"):
        m = Memory.from_config(
            {
                "vector_store": {"provider": "qdrant", "config": {"path": "/tmp/qdrant"}},
                "history_db_path": str(tmp_path / "mem0.db"),
            }
        )
    try:
        m.add("stored in omoide's file", user_id="alice", infer=False)
        assert (tmp_path / "mem0.db").exists()
    finally:
        m.close()
    with pytest.raises(InvalidInput, match="colour"):
        Memory.from_config({"colour": "red"})
    with pytest.raises(InvalidInput, match=r"llm\.config\.model"):
        Memory.from_config({"llm": {"provider": "openai", "config": {}}})


def test_omoide_memory_takes_filters_as_a_dict(tmp_path: Path) -> None:
    from omoide.embed import HashEmbedder

    with omoide.Memory(tmp_path / "o.db", embedder=HashEmbedder(), workers=0) as memory:
        memory.add("tea in chat 1", user_id="alice", session_id="chat-1")
        memory.add("tea in chat 2", user_id="alice", session_id="chat-2")
        hits = memory.search("tea", user_id="alice", filters={"session_id": "chat-1"}).hits
        assert [h.memory.text for h in hits] == ["tea in chat 1"]
        with pytest.raises(InvalidInput, match="filters: colour"):
            memory.get_all(user_id="alice", filters={"colour": "red"})


def test_infer_extracts_facts_with_mem0_events(
    tmp_path: Path, embedder: Embedder, fake_llm: FakeLLMServer
) -> None:
    llm = OpenAICompatLLM(fake_llm.url, "fake-model", timeout=5.0)
    m = Memory(tmp_path / "llm.db", embedder=embedder, llm=llm)
    try:
        script(fake_llm, facts=["The user lives in Osaka"])
        first = m.add("I live in Osaka", user_id="alice")["results"]
        assert [(r["memory"], r["event"]) for r in first] == [
            ("I live in Osaka", "ADD"),
            ("The user lives in Osaka", "ADD"),
        ]
        script(
            fake_llm,
            facts=["The user lives in Berlin"],
            reconcile=[{"op": "UPDATE", "id": "0", "text": "The user lives in Berlin"}],
        )
        second = m.add("I moved to Berlin", user_id="alice")["results"]
        assert [(r["memory"], r["event"]) for r in second][-1] == (
            "The user lives in Berlin",
            "UPDATE",
        )
        # Only the facts step asked the LLM: no profile, summary or graph calls.
        assert len([r for r in fake_llm.requests if r.get("messages")]) == 3
        events = m.history(second[-1]["id"])
        assert [(e["event"], e["new_memory"]) for e in events] == [
            ("ADD", "The user lives in Osaka"),
            ("UPDATE", "The user lives in Berlin"),
        ]
    finally:
        m.close()
        llm.close()
