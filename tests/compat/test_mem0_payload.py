"""A mem0 memory's payload as mem0 (``mem0/memory/main.py``, mem0ai/mem0) keeps and returns it:
``update(metadata=...)`` merges into the stored metadata, ``role`` and ``actor_id`` (a
message's ``name``) sit beside ``metadata`` rather than inside it, history entries name the
message's author, and a deleted memory's id is mem0's ``ValueError`` to update or delete.
Also mem0's search arguments at their edges: ``top_k=0`` and the ``run_id: "*"`` wildcard of
mem0's search docs. Real SQLite in a tmp dir, the hash embedder through the environment."""

from __future__ import annotations

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


def test_update_metadata_merges_into_the_stored_metadata(m: Memory) -> None:
    messages = [{"role": "user", "content": "I like jasmine tea"}]
    [added] = m.add(messages, user_id="alice", metadata={"category": "drinks"}, infer=False)[
        "results"
    ]
    m.update(added["id"], data="I like oolong tea", metadata={"mood": "calm"})

    got = m.get(added["id"])
    assert got is not None
    assert got["metadata"] == {"category": "drinks", "mood": "calm"}
    assert got["role"] == "user"
    hits = m.search("tea", filters={"user_id": "alice", "category": "drinks"})["results"]
    assert [h["memory"] for h in hits] == ["I like oolong tea"]


def test_role_and_author_sit_beside_metadata(m: Memory) -> None:
    messages = [
        {"role": "user", "content": "I like jasmine tea", "name": "alice"},
        {"role": "assistant", "content": "Noted: jasmine tea."},
    ]
    added = m.add(messages, user_id="alice", metadata={"category": "drinks"}, infer=False)
    first, second = added["results"]
    assert (first["role"], first["actor_id"]) == ("user", "alice")
    assert second["role"] == "assistant" and "actor_id" not in second
    for item in (m.get(first["id"]), *m.get_all(filters={"user_id": "alice"})["results"]):
        assert item is not None and item["metadata"] == {"category": "drinks"}
    assert m.get(first["id"])["actor_id"] == "alice"  # type: ignore[index]

    entries = m.history(first["id"])
    assert [(e["actor_id"], e["role"]) for e in entries] == [("alice", "user")]
    assert all(isinstance(e["id"], str) for e in entries)  # mem0's history ids are uuids
    [assistant_entry] = m.history(second["id"])
    assert assistant_entry["actor_id"] is None  # no name: no author, as in mem0


def test_a_deleted_memory_is_mem0s_value_error_to_update_or_delete(m: Memory) -> None:
    [added] = m.add("I like tea", user_id="alice", infer=False)["results"]
    m.delete(added["id"])
    for call in (lambda: m.delete(added["id"]), lambda: m.update(added["id"], data="x")):
        with pytest.raises(ValueError, match=added["id"]):
            call()


def test_top_k_zero_asks_for_nothing(m: Memory) -> None:
    m.add("I like tea", user_id="alice", infer=False)
    assert m.search("tea", filters={"user_id": "alice"}, top_k=0) == {"results": []}
    assert m.get_all(filters={"user_id": "alice"}, top_k=0) == {"results": []}
    with pytest.raises(InvalidInput, match="filters must contain"):
        m.search("tea", top_k=0)  # the owner is still required


def test_run_id_wildcard_matches_every_run(m: Memory) -> None:
    m.add("tea in run one", user_id="alice", run_id="r1", infer=False)
    m.add("tea in run two", user_id="alice", run_id="r2", infer=False)
    m.add("tea in no run", user_id="alice", infer=False)

    hits = m.search("tea", filters={"user_id": "alice", "run_id": "*"})["results"]
    every = ["tea in no run", "tea in run one", "tea in run two"]
    assert sorted(h["memory"] for h in hits) == every
    listed = m.get_all(filters={"user_id": "alice", "run_id": "*"})["results"]
    assert len(listed) == 3
    # a wildcard omoide cannot honour is refused, not matched against the text "*"
    for filters in ({"user_id": "alice", "category": "*"}, {"user_id": "*"}):
        with pytest.raises(InvalidInput, match="filters"):
            m.search("tea", filters=filters)


def test_ids_are_trimmed_as_mem0_trims_them(m: Memory) -> None:
    [added] = m.add("I like tea", user_id=" alice ", infer=False)["results"]
    assert added["user_id"] == "alice"
    assert len(m.get_all(filters={"user_id": "alice"})["results"]) == 1
    assert m.search("tea", filters={"user_id": "alice "})["results"]
    m.delete_all(user_id="alice\n")
    assert m.get_all(filters={"user_id": "alice"}) == {"results": []}


def test_raw_add_skips_a_message_whose_content_is_none(m: Memory) -> None:
    messages = [{"role": "user", "content": None}, {"role": "user", "content": "I like tea"}]
    added = m.add(messages, user_id="alice", infer=False)["results"]
    assert [r["memory"] for r in added] == ["I like tea"]


def test_from_config_takes_mem0s_custom_instructions_with_a_warning() -> None:
    with pytest.warns(UserWarning, match="custom_instructions"):
        memory = Memory.from_config({"custom_instructions": "Only remember food preferences."})
    memory.close()


def test_filters_name_metadata_keys_as_mem0s_docs_do(m: Memory) -> None:
    """mem0's "Working with Metadata" writes ``"metadata.category"`` for ``category``."""
    stated = {"I prefer tea over coffee": "preferences", "I live in Seattle": "places"}
    for text, category in stated.items():
        m.add(text, user_id="u", metadata={"category": category}, infer=False)

    filters = {"user_id": "u", "metadata.category": "preferences"}
    assert [h["memory"] for h in m.search("tea", filters=filters)["results"]] == [
        "I prefer tea over coffee"
    ]
    assert [r["memory"] for r in m.get_all(filters=filters)["results"]] == [
        "I prefer tea over coffee"
    ]
    with pytest.raises(InvalidInput, match="nested metadata path"):
        m.search("Paris", filters={"user_id": "u", "metadata.details.location.city": "Paris"})


def test_explain_adds_score_details_as_mem0s_search_docs_print_them(
    m: Memory, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs.mem0.ai "Search Memory", "Explain OSS search scores": it was an InvalidInput."""
    m.add("I love sushi and ramen", user_id="alice", metadata={"kind": "food"}, infer=False)
    m.add("I hike on weekends", user_id="alice", infer=False)

    # fmt: off
    results = m.search(
        "food preferences",
        filters={"user_id": "alice"},
        explain=True,
    )

    print(results["results"][0]["score_details"])  # noqa: T201 (mem0's docs, verbatim)
    # fmt: on

    assert "final_score" in capsys.readouterr().out
    for hit in results["results"]:
        details = hit["score_details"]
        assert details["final_score"] == hit["score"] and details["threshold"] is None
        assert details["semantic_score"] is not None  # every hit here was seen by the vectors
        assert set(details["signals"]) >= {"vector"}
    plain = m.search("food preferences", filters={"user_id": "alice"})["results"]
    assert all("score_details" not in h for h in plain)  # mem0's shape unchanged without it


def test_delete_all_of_a_wildcard_id_is_refused_not_a_silent_no_op(m: Memory) -> None:
    """mem0's platform deletes every user's memories for ``user_id="*"``; the shim's id "*"
    named a user nobody is and deleted nothing, saying it had."""
    m.add("I like tea", user_id="alice", infer=False)
    for ids in ({"user_id": "*"}, {"agent_id": "*"}, {"user_id": "alice", "run_id": "*"}):
        with pytest.raises(InvalidInput, match=r"reset\(\)"):
            m.delete_all(**ids)
    assert len(m.get_all(filters={"user_id": "alice"})["results"]) == 1


def test_an_id_argument_means_what_it_means_in_filters(m: Memory) -> None:
    """mem0 moves ``run_id=`` into its filters: the wildcard is one there too. The shim read
    ``run_id="*"`` as a run called "*" (nothing found), and ``user_id="*"`` as a user so
    named, where the same ids in ``filters`` are a wildcard and a refusal."""
    m.add("tea in run one", user_id="alice", run_id="r1", infer=False)
    m.add("tea in no run", user_id="alice", infer=False)

    hits = m.search("tea", user_id="alice", run_id="*")["results"]
    assert sorted(h["memory"] for h in hits) == ["tea in no run", "tea in run one"]
    assert len(m.get_all(user_id="alice", run_id="*")["results"]) == 2
    for ids in ({"user_id": "*"}, {"user_id": "alice", "agent_id": "*"}):
        with pytest.raises(InvalidInput, match="filters"):
            m.search("tea", **ids)
        with pytest.raises(InvalidInput, match="filters"):
            m.get_all(**ids)
