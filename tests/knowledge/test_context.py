"""Context assembly: the budget is never exceeded, the recency floor is always there, every
cited id resolves, selection is deterministic, and only budget-selected memories are counted
as accessed."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omoide import InvalidInput, Memory, MemoryType, SearchFilters
from omoide.retrieval.context import ESTIMATE, load_counter
from omoide.store.protocol import NewMemory
from omoide.types import ContextResult, Scope
from tests.knowledge.conftest import api_client, build_graph, open_memory

ID = re.compile(r"\[([0-9a-f]{32})\]")
TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    min_size=1,
    max_size=400,
).filter(lambda t: t.strip() != "")
WORDS = st.lists(
    st.sampled_from(["tea", "Mei", "Osaka", "trip", "sister", "Lin", "job"]), min_size=1, max_size=5
).map(" ".join)


def seed(memory: Memory, turns: list[str], facts: list[str]) -> None:
    """Turns as exchanges of session ``s``, facts, a profile, variables, a summary, a graph."""
    for start in range(0, len(turns), 2):
        roles = ("user", "assistant")[: len(turns[start : start + 2])]
        pair = [{"role": r, "content": t} for r, t in zip(roles, turns[start:], strict=False)]
        memory.add(pair, user_id="u", session_id="s", infer=False)
    if facts:
        memory.add_many([NewMemory(text=f, type=MemoryType.SEMANTIC) for f in facts], user_id="u")
    memory.add_many(
        [
            NewMemory(text="name: Mei", type=MemoryType.USER_PROFILE),
            NewMemory(text="likes: jasmine tea", type=MemoryType.USER_PROFILE),
        ],
        user_id="u",
    )
    memory.update_variables({"city": "Osaka", "age": 31}, user_id="u")
    memory.create_summary("s", "Mei talked about tea and a trip to Osaka.", user_id="u")
    build_graph(
        memory, Scope(user_id="u"), [("Mei", "sister of", "Lin"), ("Lin", "works at", "Acme")]
    )


def check(memory: Memory, result: ContextResult, budget: int) -> None:
    counter = load_counter(memory.knowledge.tokenizer)
    assert counter.count(result.text) == result.tokens <= budget
    for item in result.items:
        assert item.text in result.text
        if item.kind == "memory":
            assert memory.get(item.id, user_id="u").id == item.id
        elif item.kind == "entity":
            assert memory.get_entity(item.id, user_id="u").id == item.id
        elif item.kind == "relationship":
            rels = memory.list_relationships(user_id="u")[0]
            assert item.id in {r.id for r in rels}
        else:
            assert item.id.removeprefix("var:") in memory.get_variables(user_id="u")
    cited = set(ID.findall(result.text))
    assert cited == {i.id for i in result.items if i.kind != "variable"}


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    budget=st.integers(min_value=100, max_value=2500),
    turns=st.lists(TEXT, min_size=1, max_size=12),
    facts=st.lists(TEXT, max_size=8),
    query=WORDS,
    estimate=st.booleans(),
)
def test_budget_never_exceeded_and_the_floor_is_there(
    budget: int, turns: list[str], facts: list[str], query: str, estimate: bool
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        options = {"tokenizer": ESTIMATE} if estimate else {}
        with open_memory(Path(folder) / "m.db", **options) as memory:
            seed(memory, turns, facts)
            result = memory.context(query, user_id="u", session_id="s", token_budget=budget)
            check(memory, result, budget)
            only = SearchFilters(session_id="s", types=[MemoryType.RAW])
            [newest] = memory.get_all(user_id="u", filters=only, limit=1).items
            assert result.recent and result.recent[-1].id == newest.id, result.text
            again = memory.context(query, user_id="u", session_id="s", token_budget=budget)
            assert again.text == result.text  # deterministic (access counts do not matter)


@pytest.fixture
def seeded(plain: Memory) -> Memory:
    turns = [f"turn {n}: we talked about tea number {n}" for n in range(10)]
    seed(plain, turns, [f"Mei likes tea variety {n}" for n in range(30)])
    return plain


def test_every_section_is_there_when_the_budget_allows(seeded: Memory) -> None:
    result = seeded.context("what tea does Mei like?", user_id="u", session_id="s")
    check(seeded, result, 2000)
    headings = [line for line in result.text.splitlines() if line.startswith("## ")]
    assert headings == [
        "## User profile",
        "## Variables",
        "## Conversation summary",
        "## Relevant memories",
        "## Knowledge graph",
        "## Recent turns",
    ]
    assert {i.text for i in result.variables} == {"- age: 31", "- city: Osaka"}
    assert result.summary is not None and "trip to Osaka" in result.summary.text
    assert any("Mei -[sister of]-> Lin" in i.text for i in result.graph)
    assert [i.text.split("] ", 1)[1] for i in result.recent] == [
        f"{role}: turn {n}: we talked about tea number {n}"
        for n, role in zip(range(4, 10), ["user", "assistant"] * 3, strict=True)
    ]
    assert not {i.id for i in result.recent} & {i.id for i in result.memories}
    assert result.tokenizer == "cl100k_base" and not result.degraded


def test_a_tiny_budget_keeps_the_newest_turn_cut_short(plain: Memory) -> None:
    plain.add("older turn", user_id="u", session_id="s", infer=False)
    plain.add("word " * 3000, user_id="u", session_id="s", infer=False)
    result = plain.context("word", user_id="u", session_id="s", token_budget=100)
    assert result.tokens <= 100 and len(result.recent) == 1
    assert result.recent[0].text.endswith("…") and result.dropped >= 1


def test_access_counts_move_only_for_budget_selected_memories(seeded: Memory) -> None:
    result = seeded.context("Mei tea variety", user_id="u", session_id="s", token_budget=600)
    chosen = {i.id for i in (*result.profile, *result.memories)} | {result.summary.id}  # type: ignore[union-attr]
    floor = {i.id for i in result.recent}
    assert chosen and floor and result.dropped > 0
    everything = seeded.get_all(user_id="u", limit=1000).items
    for item in everything:
        assert item.access_count == (1 if item.id in chosen else 0), item.text
        assert (item.last_accessed_at is not None) == (item.id in chosen)
    episodes = {e.id: e for e in seeded.list_episodes("s", user_id="u")[0]}
    sources = {e for i in everything if i.id in chosen for e in i.source_episodes}
    for episode in episodes.values():
        assert episode.access_count == (1 if episode.id in sources else 0)
    seeded.context(
        "Mei tea variety", user_id="u", session_id="s", token_budget=600, track_access=False
    )
    assert sum(i.access_count for i in seeded.get_all(user_id="u", limit=1000).items) == len(chosen)


def test_touch_episodes_and_memories_stay_in_their_tenant(seeded: Memory) -> None:
    [first, *_] = seeded.list_episodes("s", user_id="u")[0]
    assert seeded.touch_episodes([first.id, first.id, "nope"], user_id="u") == 1
    assert seeded.touch_episodes([first.id], user_id="intruder") == 0
    assert seeded.list_episodes("s", user_id="u")[0][0].access_count == 1
    fact = seeded.get_all(user_id="u", limit=1).items[0]
    assert seeded.touch_memories([fact.id], user_id="u") >= 1
    assert seeded.get(fact.id, user_id="u").access_count == 1
    with pytest.raises(InvalidInput):
        seeded.touch_episodes("abc", user_id="u")  # type: ignore[arg-type]


def test_without_a_session_there_is_no_floor(seeded: Memory) -> None:
    result = seeded.context("tea", user_id="u", token_budget=400)
    assert result.recent == [] and result.summary is None and result.tokens <= 400
    other = seeded.context("tea", user_id="stranger", token_budget=400)
    assert other.text == "" and other.items == []


def test_bad_arguments(seeded: Memory) -> None:
    with pytest.raises(InvalidInput, match="token_budget"):
        seeded.context("tea", user_id="u", token_budget=99)
    with pytest.raises(InvalidInput, match="query"):
        seeded.context("  ", user_id="u")
    with pytest.raises(InvalidInput, match="recent_turns"):
        seeded.context("tea", user_id="u", recent_turns=-1)


def test_tokenizers_load_offline_or_fall_back_to_the_estimate() -> None:
    counter = load_counter("cl100k_base")
    assert counter.name == "cl100k_base" and counter.count("hello world") == 2
    assert load_counter("no_such_encoding").name == ESTIMATE
    assert load_counter(ESTIMATE).count("hello world") == 4


def test_cli_and_route(seeded: Memory, cli, tmp_path: Path) -> None:
    client = api_client(seeded)
    body = {"query": "tea", "user_id": "u", "session_id": "s", "token_budget": 300}
    response = client.post("/v1/context", json=body)
    assert response.status_code == 200, response.text
    data = response.json()
    assert data["tokens"] <= 300 and data["recent"] and data["text"].count("[") >= 2
    assert client.post("/v1/context", json={**body, "token_budget": 5}).status_code == 422
    [episode, *_] = seeded.list_episodes("s", user_id="u")[0]
    touched = client.post("/v1/episodes/touch", json={"episode_ids": [episode.id], "user_id": "u"})
    assert touched.json() == {"touched": 1}

    with open_memory(tmp_path / "data" / "omoide.db") as memory:
        seed(memory, ["hello there", "hi, how are you?"], [])
    code, out, err = cli("context", "tea", "--user", "u", "--session", "s", "--budget", "200")
    assert code == 0, err
    assert "## Recent turns" in out and "tokens (cl100k_base)" in err
    code, out, _ = cli("context", "tea", "--user", "u", "--json")
    assert code == 0 and '"token_budget": 2000' in out


def test_a_session_of_an_isolated_project_sees_its_project_only(plain: Memory) -> None:
    plain.add("a secret about tea", user_id="u", session_id="elsewhere", infer=False)
    plain.create_project("private", user_id="u", isolated=True)
    plain.create_session("inside", user_id="u", project="private")
    plain.add("tea inside the project", user_id="u", session_id="inside", infer=False)
    plain.add("more tea talk", user_id="u", session_id="inside", infer=False)
    result = plain.context("tea", user_id="u", session_id="inside", recent_turns=1)
    assert [i.text.split("] ")[1] for i in result.recent] == ["user: more tea talk"]
    assert "secret" not in result.text and "tea inside the project" in result.text
    outside = plain.context("tea", user_id="u", session_id="elsewhere")
    assert "inside the project" not in outside.text
    assert plain.context("tea", user_id="u", session_id="never-seen").recent == []
