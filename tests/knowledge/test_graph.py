"""Graph traversal: neighbourhoods (depth 0, 1, 3), cycles, direction, tenant isolation, bulk
1-hop neighbours and entity search, through the library, the CLI and the HTTP routes."""

from __future__ import annotations

import json

import pytest

from omoide import InvalidInput, Memory, NotFound
from omoide.types import Scope
from tests.knowledge.conftest import ALICE, BOB, api_client, build_graph

# A -> B -> C -> A is a cycle; C -> D -> E is a tail; F -> A points in; G is alone.
EDGES = [
    ("A", "knows", "B"),
    ("B", "knows", "C"),
    ("C", "knows", "A"),
    ("C", "owns", "D"),
    ("D", "part of", "E"),
    ("F", "likes", "A"),
]


@pytest.fixture
def graph(plain: Memory) -> dict[str, str]:
    found = build_graph(plain, ALICE, EDGES, isolated=("G",))
    build_graph(plain, BOB, [("A", "knows", "X"), ("X", "knows", "Y")])  # same names, other tenant
    return {name: entity.id for name, entity in found.items()}


def _walk(memory: Memory, ids: dict[str, str], start: str, depth: int) -> dict[str, int]:
    result = memory.neighborhood(ids[start], depth, user_id="alice")
    return {node.name: node.depth for node in result.nodes}


def _edges(memory: Memory, ids: dict[str, str], start: str, depth: int) -> set[tuple[str, ...]]:
    result = memory.neighborhood(ids[start], depth, user_id="alice")
    return {(e.from_name, e.label, e.to_name) for e in result.edges}


def test_depth_zero_is_the_entity_alone(plain: Memory, graph: dict[str, str]) -> None:
    assert _walk(plain, graph, "A", 0) == {"A": 0}
    assert _edges(plain, graph, "A", 0) == set()


def test_depth_one_follows_edges_both_ways(plain: Memory, graph: dict[str, str]) -> None:
    # out to B, in from C (C -> A) and F (F -> A)
    assert _walk(plain, graph, "A", 1) == {"A": 0, "B": 1, "C": 1, "F": 1}
    assert _edges(plain, graph, "A", 1) == {
        ("A", "knows", "B"),
        ("B", "knows", "C"),  # both ends are in the neighbourhood
        ("C", "knows", "A"),
        ("F", "likes", "A"),
    }


def test_depth_three_through_a_cycle_keeps_shortest_distances(
    plain: Memory, graph: dict[str, str]
) -> None:
    assert _walk(plain, graph, "A", 3) == {"A": 0, "B": 1, "C": 1, "F": 1, "D": 2, "E": 3}
    assert _walk(plain, graph, "E", 3) == {"E": 0, "D": 1, "C": 2, "A": 3, "B": 3}
    assert len(_edges(plain, graph, "A", 3)) == len(EDGES)
    assert _walk(plain, graph, "G", 3) == {"G": 0}


def test_edges_keep_their_direction(plain: Memory, graph: dict[str, str]) -> None:
    result = plain.neighborhood(graph["F"], 1, user_id="alice")
    [edge] = result.edges
    assert (edge.from_id, edge.to_id) == (graph["F"], graph["A"])


def test_a_large_cycle_terminates_and_is_truncated_at_max_nodes(plain: Memory) -> None:
    ring = [(f"n{i}", "next", f"n{(i + 1) % 40}") for i in range(40)]
    ids = {n: e.id for n, e in build_graph(plain, ALICE, ring).items()}
    full = plain.neighborhood(ids["n0"], 6, user_id="alice")
    assert len(full.nodes) == 13 and not full.truncated  # 6 each way round the ring
    assert max(n.depth for n in full.nodes) == 6
    cut = plain.neighborhood(ids["n0"], 6, user_id="alice", max_nodes=5)
    assert cut.truncated and [n.depth for n in cut.nodes] == [0, 1, 1, 2, 2]


def test_another_tenants_entity_is_not_found(plain: Memory, graph: dict[str, str]) -> None:
    bob_a = plain.search_entities("A", user_id="bob").hits[0].entity
    with pytest.raises(NotFound):
        plain.neighborhood(bob_a.id, 1, user_id="alice")
    assert _walk(plain, graph, "A", 3).keys().isdisjoint({"X", "Y"})
    assert {n.name for n in plain.neighborhood(bob_a.id, 3, user_id="bob").nodes} == {
        "A",
        "X",
        "Y",
    }
    mixed = plain.neighbors([graph["A"], bob_a.id], user_id="alice")
    assert {n.name for n in mixed.nodes} == {"A", "B", "C", "F"}


def test_bad_arguments(plain: Memory, graph: dict[str, str]) -> None:
    with pytest.raises(InvalidInput, match="depth"):
        plain.neighborhood(graph["A"], 7, user_id="alice")
    with pytest.raises(InvalidInput, match="depth"):
        plain.neighborhood(graph["A"], -1, user_id="alice")
    with pytest.raises(InvalidInput):
        plain.neighbors("not-a-list", user_id="alice")  # type: ignore[arg-type]


def test_bulk_neighbors(plain: Memory, graph: dict[str, str]) -> None:
    result = plain.neighbors([graph["B"], graph["D"], "unknown"], user_id="alice")
    depths = {n.name: n.depth for n in result.nodes}
    assert depths == {"B": 0, "D": 0, "A": 1, "C": 1, "E": 1}
    assert {(e.from_name, e.to_name) for e in result.edges} == {
        ("A", "B"),
        ("B", "C"),
        ("C", "D"),
        ("D", "E"),
    }


def test_search_entities_by_name_then_vector(plain: Memory) -> None:
    build_graph(plain, ALICE, [("Mei Chen", "lives in", "Shenzhen")], isolated=("Acme Corp",))
    hits = plain.search_entities("where does mei chen live", user_id="alice").hits
    assert hits[0].entity.name == "Mei Chen" and hits[0].score == 1.0
    assert plain.search_entities("Acme", user_id="alice").hits[0].entity.name == "Acme Corp"
    assert plain.search_entities("Acme", user_id="bob").hits == []


def test_cli_graph_commands(cli, tmp_path) -> None:
    from omoide.config import Settings
    from omoide.embed import HashEmbedder

    db = tmp_path / "data" / "omoide.db"
    with Memory(db, embedder=HashEmbedder(), settings=Settings(), workers=0) as memory:
        ids = {n: e.id for n, e in build_graph(memory, Scope(), EDGES).items()}
    code, out, _ = cli("graph", "neighborhood", ids["A"], "--depth", "3", "--json")
    assert code == 0, out
    assert {n["name"] for n in json.loads(out)["nodes"]} == {"A", "B", "C", "D", "E", "F"}
    code, out, _ = cli("graph", "neighborhood", ids["A"])
    assert code == 0 and "A -[knows]-> B" in out
    code, out, _ = cli("graph", "search", "A", "--json")
    assert code == 0 and json.loads(out)["hits"][0]["entity"]["id"] == ids["A"]
    code, _, err = cli("graph", "neighborhood", "nope")
    assert code == 1 and "not found" in err


def test_routes(plain: Memory, graph: dict[str, str]) -> None:
    client = api_client(plain)
    url = f"/v1/graph/entities/{graph['A']}/neighborhood"
    walked = client.get(url, params={"user_id": "alice", "depth": 3})
    assert walked.status_code == 200, walked.text
    assert {n["name"]: n["depth"] for n in walked.json()["nodes"]}["E"] == 3
    assert client.get(url, params={"user_id": "bob"}).status_code == 404
    assert client.get(url, params={"user_id": "alice", "depth": 9}).status_code == 422
    hop = client.post("/v1/graph/neighbors", json={"entity_ids": [graph["G"]], "user_id": "alice"})
    assert [n["name"] for n in hop.json()["nodes"]] == ["G"] and hop.json()["edges"] == []
    found = client.get("/v1/graph/search", params={"query": "F", "user_id": "alice"}).json()
    assert found["hits"][0]["entity"]["id"] == graph["F"]
