"""What ``/health`` tells whom (issue 15, point 6).

A tenant-bound key sees neither the database path nor other tenants' job counts; the embedding
probe (``?probe=true``, one embed per call) needs a key when a key is configured.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from omoide.types import Scope
from tests.api.conftest import KEY, Running

TENANT_KEYS = {"alice-key": {"user_id": "alice"}}


@pytest.fixture
def keyed(start_server: Callable[..., Running]) -> Running:
    server = start_server(api_key=KEY, tenant_keys=TENANT_KEYS)
    server.engine.add("bob's secret", user_id="bob", session_id="b1")
    server.engine.add("alice's note", user_id="alice")
    server.engine.schedule_consolidation("b1", user_id="bob")  # a job of another tenant
    return server


def _health(server: Running, key: str | None, **params: str) -> tuple[int, dict[str, object]]:
    with server.http(key) as http:
        response = http.get("/health", params=params)
    return response.status_code, response.json()


def test_a_tenant_bound_key_sees_no_path_and_only_its_own_jobs(keyed: Running) -> None:
    status, full = _health(keyed, KEY)
    assert status == 200 and str(keyed.engine.store.location) in str(full)
    bound_status, bound = _health(keyed, "alice-key")
    assert bound_status == 200
    assert str(keyed.engine.store.location) not in str(bound)
    assert "location" not in bound["store"]  # type: ignore[operator]
    own = keyed.engine.job_counts(scope=Scope(user_id="alice", scope_id="default"))
    assert bound["jobs"] == own and sum(own.values()) == 0
    assert sum(full["jobs"].values()) >= 1  # type: ignore[attr-defined]  # bob's job


def test_probe_needs_a_key_when_one_is_configured(keyed: Running) -> None:
    status, body = _health(keyed, None, probe="true")
    assert status == 401 and body["error"]["code"] == "unauthorized"  # type: ignore[index]
    assert _health(keyed, None)[0] == 200  # the plain check stays open
    assert _health(keyed, "alice-key", probe="true")[0] == 200
    status, body = _health(keyed, KEY, probe="true")
    assert status == 200 and body["embedder"]["status"] == "ok"  # type: ignore[index]


def test_probe_is_open_without_a_configured_key(server: Running) -> None:
    with server.http() as http:
        assert http.get("/health", params={"probe": "true"}).status_code == 200


def test_a_store_failure_tells_the_caller_what_happened_but_not_the_drivers_text(
    start_server: Callable[..., Running],
) -> None:
    server = start_server(workers=0)
    location = str(server.engine.store.location)
    server.engine.store.close()  # every request now fails inside the store
    with server.http() as http:
        first = http.post("/v1/memories", json={"text": "tea", "user_id": "alice"})
        second = http.post(
            "/v1/memories", json={"messages": [{"role": "user", "content": "x"}], "user_id": "b"}
        )
    for reply in (first, second):
        assert reply.status_code >= 500, reply.text
        body = reply.json()
        assert body["error"]["code"] == "store_error"
        assert "store failed" in body["detail"] and body["request_id"] in body["detail"]
        # the file path and the driver's message stay in the server log
        assert location not in reply.text and "closed" not in reply.text.lower()
