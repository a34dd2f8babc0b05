# ruff: noqa: E501, T201 (the quick start is mem0's code, verbatim: its long lines and print)
"""What a mem0 user relies on beyond the happy path: deletes that delete everything the ids
match, calls without an owner refused as mem0 refuses them, a word when ``infer=True`` cannot
infer, mem0's item fields (``hash`` included), and every keyword of mem0's ``Memory`` methods.

mem0 is not installed here: the quick start below is mem0's documented one (the v0.x Python
quick start at docs.mem0.ai, "Search Memories" to "Delete Memories"), and the signatures are
those of ``mem0/memory/main.py`` (mem0ai/mem0, ``class Memory``)."""

from __future__ import annotations

import hashlib
import inspect
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from omoide.compat.mem0 import Memory
from omoide.errors import InvalidInput


@pytest.fixture(autouse=True)
def _omoide_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMOIDE_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("OMOIDE_EMBEDDER", "hash")
    for name in ("OMOIDE_LLM_BASE_URL", "API_BASE", "OMOIDE_LLM_MODEL", "MODEL_NAME"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def m() -> Iterator[Memory]:
    memory = Memory()
    yield memory
    memory.close()


def _texts(result: dict[str, list[dict[str, object]]]) -> list[object]:
    return sorted(r["memory"] for r in result["results"])


def test_delete_all_of_a_user_removes_every_agent_and_run(m: Memory) -> None:
    m.add("plain", user_id="alice", infer=False)
    m.add("with an agent", user_id="alice", agent_id="movie-assistant", infer=False)
    m.add("in a run", user_id="alice", agent_id="movie-assistant", run_id="s1", infer=False)
    m.add("in a run, no agent", user_id="alice", run_id="s2", infer=False)
    m.add("bob's", user_id="bob", agent_id="movie-assistant", infer=False)

    assert m.delete_all(user_id="alice") == {"message": "Memories deleted successfully!"}

    for agent in (None, "movie-assistant"):
        assert m.get_all(user_id="alice", agent_id=agent)["results"] == []
    assert _texts(m.get_all(user_id="bob", agent_id="movie-assistant")) == ["bob's"]


def test_delete_all_narrows_by_the_ids_given(m: Memory) -> None:
    m.add("a1", user_id="alice", agent_id="a", run_id="r1", infer=False)
    m.add("a2", user_id="alice", agent_id="a", run_id="r2", infer=False)
    m.add("b1", user_id="alice", agent_id="b", run_id="r1", infer=False)
    m.add("bob", user_id="bob", agent_id="a", infer=False)

    m.delete_all(user_id="alice", run_id="r1")  # run r1 of every agent of alice's
    assert _texts(m.get_all(user_id="alice", agent_id="a")) == ["a2"]
    assert m.get_all(user_id="alice", agent_id="b")["results"] == []

    m.delete_all(agent_id="a")  # the agent, for every user
    assert m.get_all(user_id="alice", agent_id="a")["results"] == []
    assert m.get_all(user_id="bob", agent_id="a")["results"] == []


def test_calls_without_an_owner_raise_as_in_mem0(m: Memory) -> None:
    m.add("I like tea", user_id="default", infer=False)
    for call in (
        lambda: m.get_all(),
        lambda: m.search("tea"),
        lambda: m.search("tea", filters={"kind": "drink"}),
        lambda: m.add("x", infer=False),
    ):
        with pytest.raises(InvalidInput, match="at least one of: user_id, agent_id, run_id"):
            call()
    with pytest.raises(ValueError, match="user_id"):  # mem0 raises ValueError
        m.get_all()


def test_infer_without_an_llm_warns_once(m: Memory) -> None:
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        first = m.add("I like tea", user_id="alice")
        m.add("I like coffee", user_id="alice")
    assert [str(w.message) for w in warned] == [
        "infer=True stored the messages but extracted nothing: extraction needs an LLM: set"
        " OMOIDE_LLM_BASE_URL and OMOIDE_LLM_MODEL (pass infer=False to store messages only)"
    ]
    assert [r["event"] for r in first["results"]] == ["ADD"]  # stored all the same
    m.add("no warning", user_id="alice", infer=False)


def test_items_carry_mem0_fields(m: Memory) -> None:
    added = m.add("I like tea", user_id="alice", agent_id="a", run_id="r", infer=False)
    item = added["results"][0]
    md5 = hashlib.md5(b"I like tea").hexdigest()
    assert item["hash"] == md5 and item["event"] == "ADD"
    got = m.get(item["id"])
    assert got is not None
    expected = {"id", "memory", "hash", "metadata", "created_at", "updated_at", "user_id"}
    assert expected | {"agent_id", "run_id"} <= set(got)
    hit = m.search("tea", filters={"user_id": "alice", "agent_id": "a"})["results"][0]
    assert hit["hash"] == md5 and "score" in hit
    m.update(item["id"], data="I like oolong")
    assert m.get(item["id"])["hash"] == hashlib.md5(b"I like oolong").hexdigest()  # type: ignore[index]


@pytest.mark.filterwarnings("ignore:infer=True stored the messages:UserWarning")
def test_mem0_v0_quickstart_search_update_history_delete_unchanged(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # docs.mem0.ai/v0x/open-source/python-quickstart, "Search Memories" to "Delete
    # Memories", verbatim but for the import and for the ids, which come from this run.
    # fmt: off
    m = Memory()
    messages = [
        {"role": "user", "content": "I'm planning to watch a movie tonight. Any recommendations?"},
        {"role": "assistant", "content": "How about a thriller movies? They can be quite engaging."},
        {"role": "user", "content": "I'm not a big fan of thriller movies but I love sci-fi movies."},
        {"role": "assistant", "content": "Got it! I'll avoid thriller recommendations and suggest sci-fi movies in the future."}
    ]
    m.add(messages, user_id="alice", metadata={"category": "movie_recommendations"})
    memory_id = m.get_all(user_id="alice")["results"][0]["id"]

    related_memories = m.search(query="What do you know about me?", user_id="alice")

    # Update a Memory
    result = m.update(memory_id=memory_id, data="I love India, it is my favorite country.")
    print(result)

    # Memory History
    history = m.history(memory_id=memory_id)
    print(history)

    # Delete a memory by id
    m.delete(memory_id=memory_id)
    # Delete all memories for a user
    m.delete_all(user_id="alice")

    # Reset all memories
    m.reset()
    # fmt: on
    try:
        assert related_memories["results"]
        assert "Memory updated successfully!" in capsys.readouterr().out
        assert [h["event"] for h in history] == ["ADD", "UPDATE"]
        assert m.get(memory_id) is None
    finally:
        m.close()


# The keywords of mem0's Memory methods (mem0/memory/main.py, class Memory): older releases
# took the ids and ``limit`` as keywords, newer ones ``filters`` and ``top_k``; both work here.
MEM0_SIGNATURES = {
    "add": {
        "messages",
        "user_id",
        "agent_id",
        "run_id",
        "metadata",
        "timestamp",
        "infer",
        "memory_type",
        "prompt",
    },
    "search": {
        "query",
        "user_id",
        "agent_id",
        "run_id",
        "limit",
        "top_k",
        "filters",
        "threshold",
        "rerank",
        "explain",
        "reference_date",
    },
    "get_all": {"user_id", "agent_id", "run_id", "filters", "limit", "top_k"},
    "get": {"memory_id"},
    # docs.mem0.ai, "Update Memory": `text`, with `data` its deprecated alias, and `timestamp`
    "update": {"memory_id", "text", "data", "metadata", "timestamp"},
    "delete": {"memory_id"},
    "delete_all": {"user_id", "agent_id", "run_id"},
    "history": {"memory_id"},
    "reset": set(),
}


@pytest.mark.parametrize("method", sorted(MEM0_SIGNATURES))
def test_every_mem0_keyword_is_accepted(method: str) -> None:
    ours = set(inspect.signature(getattr(Memory, method)).parameters) - {"self"}
    assert MEM0_SIGNATURES[method] <= ours, MEM0_SIGNATURES[method] - ours


def test_update_takes_text_data_or_metadata_alone(m: Memory) -> None:
    """mem0's `update` now names the new content `text` (`data` is its older alias) and takes
    metadata alone."""
    [item] = m.add("I like tea", user_id="alice", infer=False)["results"]
    m.update(item["id"], text="I like oolong tea")
    m.update(memory_id=item["id"], metadata={"kind": "drink"})
    got = m.get(item["id"])
    assert got is not None and got["memory"] == "I like oolong tea"
    assert got["metadata"]["kind"] == "drink"
    m.update(item["id"], data="I like green tea")
    assert [h["new_memory"] for h in m.history(item["id"])][-1] == "I like green tea"
    for bad in ({}, {"text": "a", "data": "b"}, {"text": "a", "timestamp": 1700000000}):
        with pytest.raises(InvalidInput):
            m.update(item["id"], **bad)
