"""The auth matrix (no key / key x no header / wrong / right x every route) and tenant keys."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from omoide.embed.protocol import Embedder
from omoide.serve.app import create_app
from tests.api.conftest import KEY, Running, make_settings, running

UNAUTHORIZED = "Unauthorized: invalid or missing API key"
TENANT_KEYS = {
    "alice-key": {"user_id": "alice"},
    "bob-demo-key": {"user_id": "bob", "scope_id": "demo"},
}
MSG = [{"role": "user", "content": "hello"}]

# (method, path, json body): one request per route; ids need not exist (404 is not 401).
HAND_WRITTEN: list[tuple[str, str, dict[str, Any] | None]] = [
    ("POST", "/v1/memories", {"text": "I like tea"}),
    ("POST", "/v1/memories/search", {"query": "tea"}),
    ("GET", "/v1/memories", None),
    ("DELETE", "/v1/memories?user_id=nobody&scope_id=none", None),
    ("GET", "/v1/memories/abc", None),
    ("PATCH", "/v1/memories/abc", {"text": "x"}),
    ("DELETE", "/v1/memories/abc", None),
    ("GET", "/v1/memories/abc/history", None),
    ("POST", "/v1/sessions", {"session_id": "s-auth"}),
    ("GET", "/v1/sessions", None),
    ("GET", "/v1/sessions/s1", None),
    ("PATCH", "/v1/sessions/s1", {"name": "n"}),
    ("DELETE", "/v1/sessions/s1", None),
    ("POST", "/v1/sessions/s1/episodes", {"messages": MSG}),
    ("GET", "/v1/sessions/s1/episodes", None),
    ("GET", "/v1/jobs", None),
    ("GET", "/v1/jobs/stats", None),
    ("POST", "/v1/jobs/1/retry", None),
]
# The API docs are open so a browser can load them and "Authorize" there (omoide.api.docs);
# their assets are checked in tests/api/test_docs.py.
OPEN = [
    ("GET", "/"),
    ("GET", "/health"),
    ("GET", "/openapi.json"),
    ("GET", "/docs"),
    ("GET", "/redoc"),
]


def _template(path: str) -> str:
    path = path.split("?")[0]
    for concrete, template in [
        ("/memories/abc", "/memories/{memory_id}"),
        ("/sessions/s1", "/sessions/{session_id}"),
        ("/jobs/1/", "/jobs/{job_id}/"),
    ]:
        path = path.replace(concrete, template)
    return path


def _documented() -> set[tuple[str, str]]:
    spec = create_app(make_settings()).openapi()
    return {(m.upper(), p) for p, ops in spec["paths"].items() for m in ops}


# Routes added later (by anyone) join the matrix automatically, with "1" for each path
# parameter and an empty JSON body: whatever they answer, it must not be without a key.
ROUTES = HAND_WRITTEN + [
    (method, re.sub(r"\{[^}]+\}", "1", path), {} if method in ("POST", "PATCH", "PUT") else None)
    for method, path in sorted(_documented() - {(m, _template(p)) for m, p, _ in HAND_WRITTEN})
    if (method, path) not in OPEN
]
HEADERS = {
    "no header": {},
    "wrong key": {"Authorization": "Bearer not-the-key"},
    "wrong scheme": {"Authorization": f"Basic {KEY}"},
    "empty bearer": {"Authorization": "Bearer"},
    "non-ascii": {"Authorization": "Bearer ключ".encode()},
}


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[Running]:
    db = tmp_path_factory.mktemp("auth") / "keyed.db"
    with running(db, embedder, api_key=KEY, tenant_keys=TENANT_KEYS) as server:
        yield server


@pytest.fixture(scope="module")
def unkeyed(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[Running]:
    with running(tmp_path_factory.mktemp("auth") / "open.db", embedder) as server:
        yield server


def _send(server: Running, method: str, path: str, body: Any, headers: Any) -> httpx.Response:
    with httpx.Client(base_url=server.url, timeout=60) as http:
        return http.request(method, path, json=body, headers=headers)


def _id(route: tuple[str, str, Any]) -> str:
    return f"{route[0]} {route[1]}"


@pytest.mark.parametrize("route", ROUTES, ids=_id)
@pytest.mark.parametrize("case", list(HEADERS))
def test_every_route_rejects_a_missing_or_wrong_key(
    keyed: Running, route: tuple[str, str, Any], case: str
) -> None:
    response = _send(keyed, *route, HEADERS[case])
    assert response.status_code == 401
    assert response.json()["detail"] == UNAUTHORIZED
    assert response.headers["WWW-Authenticate"] == "Bearer"


@pytest.mark.parametrize("route", ROUTES, ids=_id)
def test_every_route_accepts_the_right_key(keyed: Running, route: tuple[str, str, Any]) -> None:
    response = _send(keyed, *route, {"Authorization": f"Bearer {KEY}"})
    assert response.status_code not in (401, 403), response.text
    assert response.status_code < 500 or response.status_code == 501, response.text  # 501: no LLM


@pytest.mark.parametrize("route", ROUTES, ids=_id)
def test_without_a_configured_key_every_route_is_open(
    unkeyed: Running, route: tuple[str, str, Any]
) -> None:
    response = _send(unkeyed, *route, {})
    assert response.status_code != 401, response.text
    assert response.status_code < 500 or response.status_code == 501, response.text


@pytest.mark.parametrize(("method", "path"), OPEN)
@pytest.mark.parametrize("case", list(HEADERS))
def test_root_health_and_docs_stay_open(keyed: Running, method: str, path: str, case: str) -> None:
    assert _send(keyed, method, path, None, HEADERS[case]).status_code == 200


def test_health_without_a_key_shows_only_statuses(keyed: Running) -> None:
    anonymous = _send(keyed, "GET", "/health", None, {}).json()
    assert anonymous["store"] == {"status": "ok"} and "jobs" not in anonymous
    full = _send(keyed, "GET", "/health", None, {"Authorization": f"Bearer {KEY}"}).json()
    assert full["store"]["location"] and "jobs" in full


def test_the_hand_written_routes_still_exist() -> None:
    stale = {(m, _template(p)) for m, p, _ in HAND_WRITTEN} - _documented()
    assert stale <= {("GET", "/openapi.json"), ("GET", "/docs")}


# tenant-bound keys -------------------------------------------------------------------------
@pytest.fixture
def tenants(start_server: Callable[..., Running]) -> Running:
    return start_server(api_key=KEY, tenant_keys=TENANT_KEYS)


def test_a_bound_key_writes_and_reads_only_its_tenant(tenants: Running) -> None:
    with tenants.http("alice-key") as alice, tenants.http(KEY) as admin:
        own = alice.post("/v1/memories", json={"text": "alice likes oolong"})
        assert own.status_code == 201 and own.json()["items"][0]["user_id"] == "alice"
        bob = admin.post("/v1/memories", json={"text": "bob likes oolong", "user_id": "bob"})
        bob_id = bob.json()["items"][0]["id"]

        hits = alice.post("/v1/memories/search", json={"query": "oolong"}).json()["hits"]
        assert [h["memory"]["user_id"] for h in hits] == ["alice"]
        assert alice.get("/v1/memories").json()["total"] == 1
        # Bob's id is invisible (404), and naming bob is refused (403).
        assert alice.get(f"/v1/memories/{bob_id}").status_code == 404
        assert alice.delete(f"/v1/memories/{bob_id}").status_code == 404
        assert admin.get(f"/v1/memories/{bob_id}", params={"user_id": "bob"}).status_code == 200


FORBIDDEN_FOR_ALICE: list[tuple[str, str, dict[str, Any] | None]] = [
    ("POST", "/v1/memories", {"text": "x", "user_id": "bob"}),
    ("POST", "/v1/memories/search", {"query": "x", "user_id": "bob"}),
    ("GET", "/v1/memories?user_id=bob", None),
    ("DELETE", "/v1/memories?user_id=bob&scope_id=default", None),
    ("GET", "/v1/memories/abc?user_id=bob", None),
    ("PATCH", "/v1/memories/abc", {"text": "x", "user_id": "bob"}),
    ("DELETE", "/v1/memories/abc?user_id=bob", None),
    ("GET", "/v1/memories/abc/history?user_id=bob", None),
    ("POST", "/v1/sessions", {"session_id": "s", "user_id": "bob"}),
    ("GET", "/v1/sessions?user_id=bob", None),
    ("GET", "/v1/sessions/s1?user_id=bob", None),
    ("PATCH", "/v1/sessions/s1", {"name": "n", "user_id": "bob"}),
    ("DELETE", "/v1/sessions/s1?user_id=bob", None),
    ("POST", "/v1/sessions/s1/episodes", {"messages": MSG, "user_id": "bob"}),
    ("GET", "/v1/sessions/s1/episodes?user_id=bob", None),
    ("GET", "/v1/jobs?user_id=bob", None),
    ("GET", "/v1/jobs/stats?user_id=bob", None),
    ("POST", "/v1/jobs/1/retry?user_id=bob", None),
]


def test_a_bound_key_cannot_name_another_tenant(tenants: Running) -> None:
    before = tenants.engine.store.admin.stats()
    with tenants.http("alice-key") as alice:
        for method, path, body in FORBIDDEN_FOR_ALICE:
            response = alice.request(method, path, json=body)
            assert response.status_code == 403, f"{method} {path}: {response.text}"
            assert response.json()["error"]["code"] == "forbidden"
    assert tenants.engine.store.admin.stats() == before
    tried = {(m, _template(p)) for m, p, _ in FORBIDDEN_FOR_ALICE}
    assert tried == {(m, _template(p)) for m, p, _ in HAND_WRITTEN if p.startswith("/v1/")}


def test_a_key_bound_to_a_scope_cannot_leave_it(tenants: Running) -> None:
    with tenants.http("bob-demo-key") as bob:
        added = bob.post("/v1/memories", json={"text": "bob's demo note"}).json()["items"][0]
        assert (added["user_id"], added["scope_id"]) == ("bob", "demo")
        assert bob.get("/v1/memories", params={"scope_id": "other"}).status_code == 403
        assert bob.get("/v1/memories", params={"user_id": "bob"}).json()["total"] == 1
        assert bob.get("/v1/jobs").status_code == 200  # only its own tenant's jobs


def test_bound_keys_see_only_their_jobs(tenants: Running) -> None:
    from omoide.types import Scope

    with tenants.engine.store.transaction() as tx:
        tx.jobs.enqueue_job(Scope(user_id="bob", scope_id="demo"), "noop", {}, max_attempts=1)
    with tenants.http("alice-key") as alice, tenants.http(KEY) as admin:
        assert sum(alice.get("/v1/jobs/stats").json().values()) == 0
        assert alice.get("/v1/jobs").json()["items"] == []
        assert sum(admin.get("/v1/jobs/stats").json().values()) == 1


def test_tenant_keys_alone_also_protect_the_server(start_server: Callable[..., Running]) -> None:
    server = start_server(tenant_keys=TENANT_KEYS)
    with server.http() as anonymous, server.http("alice-key") as alice:
        assert anonymous.get("/v1/memories").status_code == 401
        assert alice.get("/v1/memories").status_code == 200
