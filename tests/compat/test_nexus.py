"""The nexusAI memory-service routes over real HTTP: uvicorn on a loopback port, a real SQLite
file, the real embedding model, and (for entity extraction) the fake OpenAI-compatible server."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from omoide.compat.nexus import routes as nexus
from omoide.compat.nexus.models import NexusUpdateProject
from omoide.engine.projects import PROJECT_FIELDS
from tests.api.conftest import KEY, Running
from tests.compat.conftest import StartServer
from tests.extraction.conftest import GRAPH, script
from tests.fakes import FakeLLMServer

MEI = {"user_id": "mei"}


def _ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


def _error(response: httpx.Response, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error"]["code"] == code and body["detail"] == body["error"]["message"]


def _episode(http: httpx.Client, session: str, user: str, ai: str = "ok", **tenant: str) -> Any:
    """An exchange in ``session``, created first if needed (writes never invent sessions)."""
    tenant = tenant or MEI
    made = http.post("/sessions", json={"external_id": session} | tenant)
    assert made.status_code in (201, 409), made.text
    body = {"session_id": session, "user_message": user, "ai_response": ai} | tenant
    return _ok(http.post("/episodes", json=body), 201)


def _search(http: httpx.Client, q: str, **params: str) -> list[str]:
    """The user messages of the exchanges found, best first (one hit per exchange)."""
    found = _ok(http.get("/episodes/search", params={"q": q, **MEI, **params}))
    return [hit["user_message"] for hit in found["episodes"]]


# sessions --------------------------------------------------------------------------------
def test_sessions_create_read_and_update_only_given_fields(http: httpx.Client) -> None:
    body = {"external_id": "chat-42", "name": "Garden", "project": "garden", "metadata": {"a": 1}}
    created = _ok(http.post("/sessions", json=body | MEI), 201)
    assert created["id"] == "chat-42" and created["project"] == "garden"
    _error(http.post("/sessions", json=body | MEI), 409, "conflict")
    by_id = _ok(http.get("/sessions/chat-42", params=MEI))
    assert _ok(http.get("/sessions/by-external/chat-42", params=MEI)) == by_id == created
    assert _ok(http.get("/sessions", params=MEI))["total"] == 1

    renamed = _ok(http.patch("/sessions/chat-42", json={"name": "Allotment"} | MEI))
    assert renamed["name"] == "Allotment"
    assert (renamed["project"], renamed["metadata"]) == ("garden", {"a": 1})
    detached = _ok(http.patch("/sessions/chat-42", json={"project": None} | MEI))
    assert (detached["name"], detached["project"], detached["metadata"]) == (
        "Allotment",
        None,
        {"a": 1},
    )
    _error(http.patch("/sessions/chat-42", json={"colour": "red"} | MEI), 422, "invalid_input")
    _error(http.get("/sessions/nope", params=MEI), 404, "not_found")


def test_a_session_is_deleted_with_its_episodes_memories_and_vectors(
    server: Running, http: httpx.Client
) -> None:
    _episode(http, "doomed", "the zucchini glut is real")
    _episode(http, "doomed", "more zucchini bread")
    kept = _episode(http, "kept", "zucchini soup for lunch")
    before = server.engine.store.admin.stats()

    assert _ok(http.delete("/sessions/by-external/doomed", params=MEI)) == {"deleted": 4}
    after = server.engine.store.admin.stats()
    for table in ("memories", "memory_vectors", "memories_fts"):
        assert after[table] == before[table] - 4, table
    assert (after["sessions"], after["episodes"]) == (1, 1)
    _error(http.get("/sessions/doomed", params=MEI), 404, "not_found")
    assert _search(http, "zucchini") == ["zucchini soup for lunch"]
    assert _ok(http.get(f"/episodes/{kept['episode_id']}", params=MEI))["session_id"] == "kept"
    _error(http.delete("/sessions/by-external/doomed", params=MEI), 404, "not_found")
    # /sessions/:id is the same session
    assert _ok(http.delete("/sessions/kept", params=MEI)) == {"deleted": 2}


# episodes --------------------------------------------------------------------------------
def test_episodes_are_stored_at_once_searched_and_listed(http: httpx.Client) -> None:
    added = _episode(http, "s1", "I planted tomatoes with Lin", "Which variety?")
    assert added["session_id"] == "s1" and added["episode_id"]
    assert len(added["memory_ids"]) == 2
    assert (added["episode"]["user_message"], added["episode"]["ai_response"]) == (
        "I planted tomatoes with Lin",
        "Which variety?",
    )
    assert added["extraction"]["state"] == "disabled"  # no LLM configured
    _episode(http, "s2", "tomatoes need staking")

    page = _ok(http.get("/sessions/s1/episodes", params=MEI))
    assert page["total"] == 1 and page["items"][0]["id"] == added["episode_id"]
    assert page["items"][0]["messages"][0]["content"] == "I planted tomatoes with Lin"
    assert _search(http, "tomatoes", session_id="s1") == ["I planted tomatoes with Lin"]
    assert len(_search(http, "tomatoes")) == 2
    _error(http.get("/episodes/search", params=MEI), 422, "invalid_input")


def test_touch_moves_access_count(http: httpx.Client) -> None:
    episode_id = _episode(http, "s1", "hello")["episode_id"]
    body = {"episode_ids": [episode_id, "unknown"]} | MEI
    assert _ok(http.post("/episodes/touch", json=body)) == {"touched": 1}
    assert _ok(http.post("/episodes/touch", json=body)) == {"touched": 1}
    episode = _ok(http.get(f"/episodes/{episode_id}", params=MEI))
    assert episode["access_count"] == 2 and episode["last_accessed_at"] is not None


def test_deleting_an_episode_takes_its_memories_and_vectors(
    server: Running, http: httpx.Client
) -> None:
    gone = _episode(http, "s1", "basil on the windowsill", "Nice")["episode_id"]
    stays = _episode(http, "s1", "basil pesto tonight", "Yum")["episode_id"]
    before = server.engine.store.admin.stats()
    assert _ok(http.delete(f"/episodes/{gone}", params=MEI)) == {"deleted": 2}
    after = server.engine.store.admin.stats()
    assert after["memory_vectors"] == before["memory_vectors"] - 2
    assert after["memories"] == before["memories"] - 2 and after["episodes"] == 1
    _error(http.get(f"/episodes/{gone}", params=MEI), 404, "not_found")
    _error(http.delete(f"/episodes/{gone}", params=MEI), 404, "not_found")
    assert _search(http, "basil") == ["basil pesto tonight"]
    assert _ok(http.get(f"/episodes/{stays}", params=MEI))["id"] == stays


def test_consolidation_candidates_respect_the_session_floor(http: httpx.Client) -> None:
    _episode(http, "s1", "one")
    _episode(http, "s1", "two")
    low = _ok(http.get("/sessions/s1/consolidation-candidates", params=MEI))
    assert low["eligible"] is False and low["episode_count"] == 2 and low["candidates"] == []
    assert "at least" in low["reason"]
    params = MEI | {"min_session_episodes": "2", "min_age_days": "0"}
    ok = _ok(http.get("/sessions/s1/consolidation-candidates", params=params))
    assert ok["eligible"] is True and len(ok["candidates"]) == 2
    assert all(c["score"] == 0 for c in ok["candidates"])  # never accessed: most eligible


# entities and relationships ----------------------------------------------------------------
@pytest.fixture
def graph_server(start_server: StartServer, fake_llm: FakeLLMServer) -> Running:
    """A server whose tenant "mei" has GRAPH extracted (Lin-Mei, Lin-Acme, Mei-Shenzhen)."""
    server = start_server(llm=fake_llm)
    script(fake_llm, graph=GRAPH)
    off = {f"enable_{k}": False for k in ("user_profile", "semantic_memory", "summary_memory")}
    result = server.engine.add_messages(
        "My sister Lin works at Acme; I live in Shenzhen",
        user_id="mei",
        session_id="s1",
        enable_episodic_memory=False,
        wait=True,
        **off,
    )
    assert result.extraction.state == "done", result.extraction
    return server


def _names(subgraph: dict[str, Any]) -> dict[str, int]:
    return {n["name"]: n["depth"] for n in subgraph["nodes"]}


def test_entities_neighbourhoods_and_relationships(graph_server: Running) -> None:
    with graph_server.http() as http:
        page = _ok(http.get("/entities", params=MEI))
        assert page["total"] == 4
        ids = {e["name"]: e["id"] for e in page["items"]}
        assert _ok(http.get("/entities", params=MEI | {"type": "person"}))["total"] == 2
        mei = _ok(http.get(f"/entities/{ids['Mei']}", params=MEI))
        assert mei["name"] == "Mei" and len(mei["episodes"]) == 1

        url = f"/entities/{ids['Mei']}/neighborhood"
        one = _ok(http.get(url, params=MEI | {"depth": "1"}))
        assert _names(one) == {"Mei": 0, "Lin": 1, "Shenzhen": 1} and len(one["edges"]) == 2
        two = _ok(http.get(url, params=MEI | {"depth": "2"}))
        assert _names(two) == {"Mei": 0, "Lin": 1, "Shenzhen": 1, "Acme": 2}
        _error(http.get(url, params=MEI | {"depth": "9"}), 422, "invalid_input")

        bulk = {"entity_ids": [ids["Acme"], ids["Shenzhen"], "unknown"]} | MEI
        near = _ok(http.post("/entities/neighbors", json=bulk))
        assert _names(near) == {"Acme": 0, "Shenzhen": 0, "Lin": 1, "Mei": 1}

        assert _ok(http.get("/relationships", params=MEI))["total"] == 3
        lin = _ok(http.get("/relationships", params=MEI | {"entity_id": ids["Lin"]}))
        assert sorted(r["label"] for r in lin["items"]) == ["sister of", "works at"]

        assert _ok(http.delete(f"/entities/{ids['Lin']}", params=MEI)) == {"deleted": 1}
        _error(http.get(f"/entities/{ids['Lin']}", params=MEI), 404, "not_found")
        _error(http.delete(f"/entities/{ids['Lin']}", params=MEI), 404, "not_found")
        assert [r["label"] for r in _ok(http.get("/relationships", params=MEI))["items"]] == [
            "lives in"
        ]


def test_another_users_ids_are_not_found(graph_server: Running) -> None:
    bob = {"user_id": "bob"}
    with graph_server.http() as http:
        entity = _ok(http.get("/entities", params=MEI))["items"][0]["id"]
        episode = _episode(http, "s1", "a secret")["episode_id"]
        summary = _ok(http.post("/summaries", json={"session_id": "s1", "text": "x"} | MEI), 201)
        _ok(http.post("/projects", json={"name": "garden"} | MEI), 201)
        for path in (
            "/sessions/s1",
            "/sessions/by-external/s1",
            f"/episodes/{episode}",
            f"/entities/{entity}",
            f"/entities/{entity}/neighborhood",
            f"/summaries/{summary['id']}",
            "/projects/garden",
        ):
            _error(http.get(path, params=bob), 404, "not_found")
            if not path.endswith("neighborhood"):
                _error(http.delete(path, params=bob), 404, "not_found")
        assert _ok(http.post("/episodes/touch", json={"episode_ids": [episode]} | bob)) == {
            "touched": 0
        }
        assert _ok(http.post("/entities/neighbors", json={"entity_ids": [entity]} | bob)) == {
            "nodes": [],
            "edges": [],
            "truncated": False,
        }
        assert _ok(http.get("/entities", params=bob))["total"] == 0
        _ok(http.get("/sessions/s1", params=MEI))  # all still there for mei
        _ok(http.get(f"/entities/{entity}", params=MEI))


def test_a_bound_key_cannot_name_another_user(start_server: StartServer) -> None:
    server = start_server(api_key=KEY, tenant_keys={"mei-key": {"user_id": "mei"}})
    with server.http("mei-key") as http:
        _ok(http.post("/sessions", json={"external_id": "s1"}), 201)
        assert _ok(http.get("/sessions/s1"))["user_id"] == "mei"
        _error(http.get("/sessions/s1", params={"user_id": "bob"}), 403, "forbidden")
        _error(http.post("/projects", json={"name": "p", "user_id": "bob"}), 403, "forbidden")


# summaries -------------------------------------------------------------------------------
def test_summaries_crud(http: httpx.Client) -> None:
    body = {"session_id": "s1", "text": "Mei grows tomatoes."} | MEI
    _error(http.post("/summaries", json=body), 404, "not_found")  # no such session yet
    _ok(http.post("/sessions", json={"external_id": "s1"} | MEI), 201)
    created = _ok(http.post("/summaries", json=body), 201)
    assert created["session_id"] == "s1" and isinstance(created["created_at"], int)
    listed = _ok(http.get("/summaries", params=MEI | {"session_id": "s1"}))
    assert [s["id"] for s in listed["items"]] == [created["id"]]
    path = f"/summaries/{created['id']}"
    changed = _ok(http.patch(path, json={"text": "Mei grows tomatoes and basil."} | MEI))
    assert changed["text"] == "Mei grows tomatoes and basil."
    assert _ok(http.get(path, params=MEI))["text"] == changed["text"]
    assert _ok(http.delete(path, params=MEI)) == {"deleted": 1}
    _error(http.get(path, params=MEI), 404, "not_found")


# projects --------------------------------------------------------------------------------
def test_projects_crud_and_the_update_allowlist(http: httpx.Client) -> None:
    body = {"name": "garden", "colour": "#2e7d32", "icon": "sprout", "description": "plots"}
    created = _ok(http.post("/projects", json=body | MEI), 201)
    assert created["isolated"] is False and created["colour"] == "#2e7d32"
    assert created["updated_at"] is not None and created["notes"] is None
    _error(http.post("/projects", json=body | MEI), 409, "conflict")
    _ok(http.post("/projects", json={"name": "kitchen"} | MEI), 201)
    assert [p["name"] for p in _ok(http.get("/projects", params=MEI))["items"]] == [
        "garden",
        "kitchen",
    ]

    patch = {"notes": "seedlings in May", "system_prompt": "Be brief.", "isolated": True}
    updated = _ok(http.patch("/projects/garden", json=patch | MEI))
    assert {k: updated[k] for k in patch} == patch
    assert (updated["colour"], updated["icon"], updated["description"]) == (
        "#2e7d32",
        "sprout",
        "plots",
    )
    assert updated["updated_at"] >= created["updated_at"]
    for bad in ({"bogus": 1}, {"created_at": "2020-01-01"}, {"isolated": None}, {}):
        _error(http.patch("/projects/garden", json=bad | MEI), 422, "invalid_input")
    _error(http.patch("/projects/garden", json={"name": "kitchen"} | MEI), 409, "conflict")
    renamed = _ok(http.patch("/projects/garden", json={"name": "allotment"} | MEI))
    assert renamed["name"] == "allotment" and renamed["notes"] == "seedlings in May"
    _error(http.get("/projects/garden", params=MEI), 404, "not_found")
    _error(http.patch("/projects/nope", json={"notes": "x"} | MEI), 404, "not_found")


def test_the_update_model_is_exactly_the_seed_allowlist() -> None:
    fields = set(NexusUpdateProject.model_fields) - {"user_id", "scope_id"}
    assert fields == set(PROJECT_FIELDS)
    assert nexus.router.routes  # registered by create_app when compat_nexus is on


def test_deleting_a_project_detaches_its_sessions(server: Running, http: httpx.Client) -> None:
    _ok(http.post("/projects", json={"name": "garden"} | MEI), 201)
    for sid in ("s1", "s2"):
        _ok(http.post("/sessions", json={"external_id": sid, "project": "garden"} | MEI), 201)
    _episode(http, "s1", "compost turned")
    memories = server.engine.store.admin.stats()["memories"]

    removed = _ok(http.delete("/projects/garden", params=MEI))
    assert removed == {"name": "garden", "sessions_detached": 2, "sessions_deleted": 0}
    for sid in ("s1", "s2"):
        assert _ok(http.get(f"/sessions/{sid}", params=MEI))["project"] is None
    assert server.engine.store.admin.stats()["memories"] == memories
    _error(http.get("/projects/garden", params=MEI), 404, "not_found")
    _error(http.delete("/projects/garden", params=MEI), 404, "not_found")


def test_deleting_a_project_is_one_transaction(
    server: Running, http: httpx.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    _ok(http.post("/sessions", json={"external_id": "s1", "project": "garden"} | MEI), 201)
    store = server.engine.store

    def fail(*args: object) -> None:
        raise RuntimeError("disk gone")

    with store.transaction() as tx:
        real = type(tx.sessions).delete_project
    monkeypatch.setattr(
        type(tx.sessions),
        "delete_project",
        lambda self, scope, name: (real(self, scope, name), fail())[0],
    )
    assert http.delete("/projects/garden", params=MEI).status_code == 500
    monkeypatch.undo()
    assert _ok(http.get("/sessions/s1", params=MEI))["project"] == "garden"  # rolled back
    assert _ok(http.get("/projects/garden", params=MEI))["name"] == "garden"


def test_an_isolated_projects_memories_stay_inside_it(http: httpx.Client) -> None:
    _ok(http.post("/projects", json={"name": "vault", "isolated": True} | MEI), 201)
    _ok(http.post("/sessions", json={"external_id": "inside", "project": "vault"} | MEI), 201)
    _episode(http, "inside", "the orchid code is 4711")
    _episode(http, "outside", "the orchid needs water")

    assert _search(http, "orchid", project="vault") == ["the orchid code is 4711"]
    assert _search(http, "orchid") == ["the orchid needs water"]
    # once the project is no longer isolated, everyone sees it
    _ok(http.patch("/projects/vault", json={"isolated": False} | MEI))
    assert len(_search(http, "orchid")) == 2
