"""Issue 14, part 4 over HTTP: operations on one memory by id (get, update, history, delete)
work without `user_id`, as in mem0: the id names its own tenant. A tenant-bound key still
limits them: another tenant's id is 404, like an id nobody has."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.api.conftest import KEY, Running

TENANT_KEYS = {
    "alice-key": {"user_id": "alice"},
    "bob-demo-key": {"user_id": "bob", "scope_id": "demo"},
}


@pytest.fixture
def server(start_server: Callable[..., Running]) -> Running:
    return start_server(api_key=KEY, tenant_keys=TENANT_KEYS)


def _add(server: Running, text: str, **tenant: str) -> str:
    with server.http(KEY) as admin:
        added = admin.post("/v1/memories", json={"text": text, **tenant})
    assert added.status_code == 201, added.text
    return str(added.json()["items"][0]["id"])


def test_the_id_names_its_own_tenant(server: Running) -> None:
    memory_id = _add(server, "Carol keeps bees", user_id="carol", scope_id="farm")
    with server.http(KEY) as admin:
        got = admin.get(f"/v1/memories/{memory_id}")
        assert got.status_code == 200, got.text
        assert (got.json()["user_id"], got.json()["scope_id"]) == ("carol", "farm")
        patched = admin.patch(f"/v1/memories/{memory_id}", json={"text": "Carol keeps goats"})
        assert patched.status_code == 200 and patched.json()["text"] == "Carol keeps goats"
        assert admin.delete(f"/v1/memories/{memory_id}").status_code == 204
        history = admin.get(f"/v1/memories/{memory_id}/history")  # a deleted one's too
        assert history.status_code == 200
        assert [e["event"] for e in history.json()] == ["ADD", "UPDATE", "DELETE"]
        assert admin.get(f"/v1/memories/{memory_id}").status_code == 404
        assert admin.get("/v1/memories/no-such-id").status_code == 404
        # Naming a tenant still means that tenant: the id is not in "default".
        other = _add(server, "Dan rows", user_id="dan")
        assert admin.get(f"/v1/memories/{other}", params={"user_id": "x"}).status_code == 404
    with server.client(KEY) as client:  # the HTTP client names no tenant unless told
        assert client.get(other).text == "Dan rows"


def test_a_bound_key_reaches_only_its_own_ids(server: Running) -> None:
    alices = _add(server, "Alice plays go", user_id="alice", scope_id="club")
    bobs = _add(server, "Bob sings", user_id="bob", scope_id="demo")
    bobs_other_scope = _add(server, "Bob paints", user_id="bob", scope_id="home")
    with server.http("alice-key") as alice, server.http("bob-demo-key") as bob:
        assert alice.get(f"/v1/memories/{alices}").json()["scope_id"] == "club"
        assert alice.get(f"/v1/memories/{alices}/history").status_code == 200
        for path in (f"/v1/memories/{bobs}", f"/v1/memories/{bobs}/history"):
            assert alice.get(path).status_code == 404
        assert alice.patch(f"/v1/memories/{bobs}", json={"text": "x"}).status_code == 404
        assert alice.delete(f"/v1/memories/{bobs}").status_code == 404
        assert bob.get(f"/v1/memories/{bobs}").status_code == 200
        assert bob.get(f"/v1/memories/{bobs_other_scope}").status_code == 404  # not its scope
        assert bob.delete(f"/v1/memories/{alices}").status_code == 404
    with server.http(KEY) as admin:  # nothing was changed by the refused calls
        assert admin.get(f"/v1/memories/{bobs}").json()["text"] == "Bob sings"
        assert admin.get(f"/v1/memories/{alices}").status_code == 200
