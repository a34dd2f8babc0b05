"""Entities and relationships: tenant-local, upserted with mention counts, deleted whole."""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
import pytest

from omoide import EmbedderError, Entity, Memory, NotFound
from omoide.embed import HashEmbedder
from tests import sql
from tests.extraction.conftest import CHAT, GRAPH, script
from tests.fakes import FakeLLMServer

GRAPH_ONLY = {
    "enable_semantic_memory": False,
    "enable_user_profile": False,
    "enable_episodic_memory": False,
    "enable_summary_memory": False,
}


def add_graph(memory: Memory, fake: FakeLLMServer, user_id: str, graph: dict | None = None) -> None:
    script(fake, graph=graph or GRAPH)
    result = memory.add_messages(CHAT, user_id=user_id, session_id="s", wait=True, **GRAPH_ONLY)
    assert result.extraction.state == "done", result.extraction


def by_name(memory: Memory, user_id: str) -> dict[str, Entity]:
    return {e.name: e for e in memory.list_entities(user_id=user_id)[0]}


def test_the_same_entity_of_two_users_is_two_entities(mem: Memory, fake_llm: FakeLLMServer) -> None:
    add_graph(mem, fake_llm, "alice")
    add_graph(mem, fake_llm, "bob")
    alice, bob = by_name(mem, "alice"), by_name(mem, "bob")
    assert set(alice) == set(bob) == {"Mei", "Lin", "Acme", "Shenzhen"}
    assert {e.id for e in alice.values()}.isdisjoint(e.id for e in bob.values())
    mei = alice["Mei"]
    assert mei.mention_count == 1
    with pytest.raises(NotFound):
        mem.get_entity(mei.id, user_id="bob")
    with pytest.raises(NotFound):
        mem.delete_entity(mei.id, user_id="bob")
    with pytest.raises(NotFound):
        mem.list_relationships(entity_id=mei.id, user_id="bob")
    assert mem.list_relationships(user_id="bob")[1] == 3


def test_upserts_count_mentions_and_keep_notes(mem: Memory, fake_llm: FakeLLMServer) -> None:
    add_graph(mem, fake_llm, "u")
    first = by_name(mem, "u")["Lin"]
    again = json.loads(json.dumps(GRAPH))
    again["entities"][1]["name"] = "LIN"  # same entity, other spelling
    again["relationships"][0]["notes"] = "a different note"
    add_graph(mem, fake_llm, "u", again)
    entities, total = mem.list_entities(user_id="u")
    assert total == 4 and {e.mention_count for e in entities} == {2}
    lin = mem.get_entity(first.id, user_id="u")
    assert lin.name == "Lin" and lin.last_seen_at > first.last_seen_at
    assert len(lin.episodes) == 2  # provenance: both episodes
    relationships, count = mem.list_relationships(entity_id=lin.id, user_id="u")
    assert count == 2 and {r.mention_count for r in relationships} == {2}
    sister = next(r for r in relationships if r.label == "sister of")
    assert sister.notes == "older sister"


def test_deleting_an_entity_removes_its_edges_and_vector(
    mem: Memory, fake_llm: FakeLLMServer
) -> None:
    add_graph(mem, fake_llm, "u")
    lin = by_name(mem, "u")["Lin"]
    assert mem.search_entities("Lin", user_id="u").hits[0].entity.id == lin.id
    mem.delete_entity(lin.id, user_id="u")
    relationships, count = mem.list_relationships(user_id="u")
    assert count == 1 and relationships[0].label == "lives in"
    assert lin.id not in {h.entity.id for h in mem.search_entities("Lin", user_id="u").hits}
    assert sql.execute(mem.store, "SELECT count(*) FROM entity_vectors") == [(3,)]
    with pytest.raises(NotFound):
        mem.get_entity(lin.id, user_id="u")


def test_search_entities_ranks_by_name_and_degrades(mem: Memory, fake_llm: FakeLLMServer) -> None:
    add_graph(mem, fake_llm, "u")
    result = mem.search_entities("Acme", user_id="u", limit=2)
    assert result.hits[0].entity.name == "Acme" and not result.degraded
    assert mem.search_entities("Acme", user_id="other").hits == []

    class Down(HashEmbedder):
        def embed(self, _texts: Sequence[str]) -> np.ndarray:
            raise EmbedderError("unreachable", retryable=True)

    mem.embedder = Down()
    degraded = mem.search_entities("where does lin work?", user_id="u")
    assert degraded.degraded and [h.entity.name for h in degraded.hits] == ["Lin"]


def test_deleting_the_tenant_deletes_its_graph_variables_and_counters(
    mem: Memory, fake_llm: FakeLLMServer
) -> None:
    add_graph(mem, fake_llm, "u")
    add_graph(mem, fake_llm, "keep")
    mem.update_variables({"city": "Shenzhen"}, user_id="u")
    mem.delete_all(user_id="u")
    assert mem.list_entities(user_id="u")[1] == 0 and mem.list_relationships(user_id="u")[1] == 0
    assert mem.get_variables(user_id="u") == {}
    assert mem.token_usage().requests == 1  # only the other tenant's call is left
    assert mem.list_entities(user_id="keep")[1] == 4
    assert sql.execute(mem.store, "SELECT count(*) FROM entity_vectors") == [(4,)]


def test_reindex_reembeds_entities(mem: Memory, fake_llm: FakeLLMServer) -> None:
    add_graph(mem, fake_llm, "u")
    mem.embedder = HashEmbedder(dim=64)
    mem.reindex()
    assert mem.search_entities("Shenzhen", user_id="u").hits[0].entity.name == "Shenzhen"
