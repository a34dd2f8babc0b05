"""Every door searches the same way (issue 31, point 5): for the same query, tenant, limit and
threshold, the JiuwenMemory routes, the MCP tools (through the SDK's own client), the mem0 shim
and ``/v1`` search return the same ids with the same scores as ``Memory.search``, the default
recipe, and ``threshold`` compares that score everywhere. One live server on loopback over a real
SQLite file and the real embedding model; facts stored one at a time, as an agent's tool does."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from omoide.compat.mem0 import Memory as Mem0
from omoide.types import MemoryType
from tests.api.conftest import Running
from tests.compat.conftest import StartServer
from tests.mcp.conftest import data, error, http_client, run

USER, SCOPE = "user_001", "demo"
TENANT = {"user_id": USER, "scope_id": SCOPE}
MEM0_OWNER = {"user_id": USER, "agent_id": SCOPE}  # mem0's agent is omoide's scope
FACTS = (
    "We adopted a grey rabbit called Clover last spring.",
    "I'm a postdoc in computational biology at McGill.",
    "I can't eat shellfish, it makes me break out in hives.",
    "My husband Dev teaches high-school chemistry.",
    "I drink three espressos a day, no milk.",
    "I'm training for a half marathon in October.",
    "My best friend Hana lives in Osaka and works as an architect.",
    "I don't own a car; I bike everywhere.",
)
# Another tenant's facts on the same topics: never a hit, never a change in a score.
OTHER = ("The user has a golden retriever named Biscuit.", "The user works at Halden Logistics.")
QUESTIONS = (
    "Does the user have pets?",
    "Where does the user work?",
    "What should I avoid cooking for them?",
    "How does the user get around town?",
    "What is the user's favourite football team?",  # never said
)
Hit = tuple[str, float]


@pytest.fixture
def facts(start_server: StartServer) -> Callable[..., Running]:
    """``facts(**settings)``: a server whose tenant holds ``FACTS``, added one per call."""

    def start(**settings: Any) -> Running:
        server = start_server(**settings)
        for text in FACTS:
            server.engine.add(text, type=MemoryType.SEMANTIC, **TENANT)
        for text in OTHER:
            server.engine.add(text, type=MemoryType.SEMANTIC, user_id="bob", scope_id=SCOPE)
        return server

    return start


def native(server: Running, query: str, num: int, threshold: float, **kw: Any) -> list[Hit]:
    found = server.engine.search(query, **TENANT, limit=num, threshold=threshold, **kw)
    return [(h.memory.id, h.score) for h in found.hits]


def pairs(hits: list[dict[str, Any]], id_key: str = "mem_id") -> list[Hit]:
    return [(h[id_key], h["score"]) for h in hits]


def v1(http: httpx.Client, query: str, num: int, threshold: float) -> list[Hit]:
    body = {"query": query, **TENANT, "limit": num, "threshold": threshold}
    response = http.post("/v1/memories/search", json=body)
    assert response.status_code == 200, response.text
    return [(h["memory"]["id"], h["score"]) for h in response.json()["hits"]]


def jiuwen(http: httpx.Client, query: str, num: int, threshold: float) -> list[Hit]:
    body = {"query": query, **TENANT, "num": num, "threshold": threshold}
    response = http.post("/search_memory/", json=body)
    assert response.status_code == 200, response.text
    return pairs(response.json()["results"])


def mcp(server: Running, calls: list[dict[str, Any]]) -> list[Any]:
    """Each ``search_memories`` call's reply (or error text), through one SDK client."""

    async def script() -> list[Any]:
        async with http_client(server.url) as client:
            replies = []
            for args in calls:
                result = await client.call_tool("search_memories", {**TENANT, **args})
                replies.append(error(result) if result.is_error else data(result))
            return replies

    return run(script)


def test_every_door_returns_the_native_ids_and_scores(facts: Callable[..., Running]) -> None:
    server = facts(jiuwen_cosine_threshold=False)
    cases = [(q, num, t) for q in QUESTIONS for num, t in ((5, 0.0), (10, 0.3))]
    tools = mcp(server, [{"query": q, "num": num, "threshold": t} for q, num, t in cases])
    mem0 = Mem0(memory=server.engine)  # shares the server's engine: closing it is the server's
    with server.http() as http:
        for (query, num, threshold), reply in zip(cases, tools, strict=True):
            expected = native(server, query, num, threshold)
            assert v1(http, query, num, threshold) == expected, query
            assert jiuwen(http, query, num, threshold) == expected, query
            assert pairs(reply["results"]) == expected and reply["count"] == len(expected)
            shim = mem0.search(query, **MEM0_OWNER, limit=num, threshold=threshold)["results"]
            assert pairs(shim, "id") == expected, query
            assert all(score >= threshold for _, score in expected)
    everything = native(server, QUESTIONS[0], 10, 0.0)
    assert len(everything) == len(FACTS)  # only this tenant's facts, whatever their score


def test_threshold_cuts_the_same_score_at_every_door(facts: Callable[..., Running]) -> None:
    server = facts(jiuwen_cosine_threshold=False)
    query = QUESTIONS[0]
    ranked = native(server, query, 10, 0.0)
    cut = ranked[1][1]  # the second hit's own score: it and everything above stay
    kept = [hit for hit in ranked if hit[1] >= cut]
    tools = mcp(server, [{"query": query, "num": 10, "threshold": cut}])
    with server.http() as http:
        assert v1(http, query, 10, cut) == kept
        assert jiuwen(http, query, 10, cut) == kept
    assert pairs(tools[0]["results"]) == kept
    shim = Mem0(memory=server.engine).search(query, **MEM0_OWNER, limit=10, threshold=cut)
    assert pairs(shim["results"], "id") == kept


def test_mcp_searches_take_a_recipe(facts: Callable[..., Running]) -> None:
    server = facts(jiuwen_cosine_threshold=False)
    query = QUESTIONS[3]
    calls = [
        {"query": query, "num": 5, "threshold": 0.0, "recipe": name}
        for name in ("keyword", "vector", "hybrid")
    ]
    replies = mcp(server, [*calls, {"query": query, "recipe": "nonsense"}])
    for call, reply in zip(calls, replies, strict=False):
        expected = native(server, query, 5, 0.0, recipe=call["recipe"])
        assert pairs(reply["results"]) == expected, call["recipe"]
    assert pairs(replies[0]["results"]) != pairs(replies[1]["results"])
    assert "unknown search recipe 'nonsense'" in replies[3]


def test_the_cosine_setting_keeps_upstreams_threshold(facts: Callable[..., Running]) -> None:
    """OMOIDE_JIUWEN_COSINE_THRESHOLD: JiuwenMemory's REST and MCP searches rank by cosine and
    cut at it (the vector recipe), for a client tuned to upstream's; /v1 keeps the default."""
    server = facts(jiuwen_cosine_threshold=True)
    query, cut = QUESTIONS[0], 0.1
    cosine = native(server, query, 5, cut, recipe="vector")
    assert cosine and cosine != native(server, query, 5, cut)
    tools = mcp(server, [{"query": query, "threshold": cut}])
    with server.http() as http:
        assert jiuwen(http, query, 5, cut) == cosine
        assert v1(http, query, 5, cut) == native(server, query, 5, cut)
    assert pairs(tools[0]["results"]) == cosine


def test_a_search_sent_without_a_threshold_is_the_native_search(
    facts: Callable[..., Running],
) -> None:
    """Upstream's default threshold (0.3) is a cosine similarity: a loose cut. Sent without
    one, JiuwenMemory's REST and MCP searches cut nothing, as ``/v1`` and the library: an
    answer the default recipe ranks first comes back however low its score, and a never-said
    question's hits come back with the low scores that tell a client so. An explicit
    threshold is compared as sent."""
    server = facts(jiuwen_cosine_threshold=False)
    tools = mcp(server, [{"query": q} for q in QUESTIONS])
    below_005 = 0
    with server.http() as http:
        for query, reply in zip(QUESTIONS, tools, strict=True):
            expected = native(server, query, 5, 0.0)
            assert len(expected) == 5, query  # eight facts: nothing cut
            body = {"query": query, **TENANT, "num": 5}
            for sent in (body, body | {"threshold": None}):
                found = http.post("/search_memory/", json=sent).json()["results"]
                assert pairs(found) == expected, query
            assert pairs(reply["results"]) == expected, query
            assert v1(http, query, 5, 0.0) == expected, query
            below_005 += sum(score < 0.05 for _, score in expected)
            assert jiuwen(http, query, 5, 0.3) == native(server, query, 5, 0.3)
    assert below_005  # what any default cut would have dropped comes back


def test_without_a_threshold_the_cosine_setting_cuts_at_upstreams_default(
    facts: Callable[..., Running],
) -> None:
    server = facts(jiuwen_cosine_threshold=True)
    query = QUESTIONS[0]
    expected = native(server, query, 5, 0.3, recipe="vector")
    assert expected != native(server, query, 5, 0.0, recipe="vector")  # 0.3 drops some
    tools = mcp(server, [{"query": query}])
    with server.http() as http:
        found = http.post("/search_memory/", json={"query": query, **TENANT, "num": 5}).json()
    assert pairs(found["results"]) == expected
    assert pairs(tools[0]["results"]) == expected


def test_without_a_threshold_a_server_whose_default_is_cosine_cuts_at_0_3(
    facts: Callable[..., Running],
) -> None:
    """The cut of an omitted threshold follows the score the search ranks by: a server whose
    default recipe is ``vector`` (``OMOIDE_SEARCH_RECIPE``) scores by cosine, so upstream's
    0.3 applies, whether or not the JiuwenMemory cosine setting is on."""
    server = facts(jiuwen_cosine_threshold=False, search_recipe="vector")
    query = QUESTIONS[0]
    expected = native(server, query, 5, 0.3, recipe="vector")
    assert expected != native(server, query, 5, 0.05, recipe="vector")  # 0.05 would keep more
    tools = mcp(server, [{"query": query}])
    with server.http() as http:
        found = http.post("/search_memory/", json={"query": query, **TENANT, "num": 5}).json()
    assert pairs(found["results"]) == expected
    assert pairs(tools[0]["results"]) == expected
