"""Every /v1 route family end to end over HTTP: results, status codes and the error shape."""

from __future__ import annotations

import logging
import time
from typing import Any

import httpx
import pytest

from omoide.types import Scope
from tests.api.conftest import Running

ALICE = {"user_id": "alice"}


def _assert_error(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"detail", "error", "request_id"}
    assert body["error"]["code"] == code
    assert body["detail"] == body["error"]["message"] != ""
    assert body["request_id"] == response.headers["X-Request-ID"]
    return body


def test_memory_lifecycle(http: httpx.Client) -> None:
    added = http.post("/v1/memories", json={"text": "I like jasmine tea", **ALICE})
    assert added.status_code == 201
    (item,) = added.json()["items"]
    assert item["user_id"] == "alice" and item["embedded"] is True
    pair = [{"role": "user", "content": "I moved to Lisbon"}, {"role": "assistant", "content": "!"}]
    both = http.post("/v1/memories", json={"messages": pair, "session_id": "chat-1", **ALICE})
    assert [m["metadata"]["role"] for m in both.json()["items"]] == ["user", "assistant"]

    got = http.get(f"/v1/memories/{item['id']}", params=ALICE).json()
    assert got["text"] == "I like jasmine tea"
    hits = http.post("/v1/memories/search", json={"query": "what tea do I drink", **ALICE})
    assert hits.json()["hits"][0]["memory"]["id"] == item["id"]

    page = http.get("/v1/memories", params={**ALICE, "limit": 1, "offset": 1}).json()
    assert (page["total"], len(page["items"]), page["limit"], page["offset"]) == (3, 1, 1, 1)
    only_chat = {"filters": '{"session_id": "chat-1"}', **ALICE}
    assert http.get("/v1/memories", params=only_chat).json()["total"] == 2

    patched = http.patch(f"/v1/memories/{item['id']}", json={"text": "I like green tea", **ALICE})
    assert patched.json()["text"] == "I like green tea"
    assert http.delete(f"/v1/memories/{item['id']}", params=ALICE).status_code == 204
    _assert_error(http.get(f"/v1/memories/{item['id']}", params=ALICE), 404, "not_found")
    history = http.get(f"/v1/memories/{item['id']}/history", params=ALICE).json()
    assert [h["event"] for h in history] == ["ADD", "UPDATE", "DELETE"]


def test_tenants_are_separate_and_default(http: httpx.Client) -> None:
    mine = http.post("/v1/memories", json={"text": "default tenant note"}).json()["items"][0]
    assert (mine["user_id"], mine["scope_id"]) == ("default", "default")
    _assert_error(http.get(f"/v1/memories/{mine['id']}", params=ALICE), 404, "not_found")
    assert http.get("/v1/memories", params=ALICE).json()["total"] == 0


def test_delete_scope_needs_both_ids_and_only_touches_that_tenant(http: httpx.Client) -> None:
    http.post("/v1/memories", json={"text": "alice one", **ALICE})
    http.post("/v1/memories", json={"text": "bob one", "user_id": "bob"})
    body = _assert_error(http.delete("/v1/memories", params=ALICE), 422, "invalid_input")
    assert "scope_id" in body["detail"]
    deleted = http.delete("/v1/memories", params={**ALICE, "scope_id": "default"})
    assert deleted.json() == {"deleted": 1}
    assert http.get("/v1/memories", params={"user_id": "bob"}).json()["total"] == 1


def test_sessions_and_episodes(http: httpx.Client) -> None:
    new = {"session_id": "chat-7", "name": "Moving", "project": "life", "metadata": {"a": 1}}
    created = http.post("/v1/sessions", json={**new, **ALICE})
    assert created.status_code == 201 and created.json()["id"] == "chat-7"
    _assert_error(http.post("/v1/sessions", json={**new, **ALICE}), 409, "conflict")

    patched = http.patch("/v1/sessions/chat-7", json={"name": "Lisbon", **ALICE}).json()
    assert patched["name"] == "Lisbon"
    assert (patched["project"], patched["metadata"]) == ("life", {"a": 1})  # unchanged
    exchange = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}]
    added = http.post("/v1/sessions/chat-7/episodes", json={"messages": exchange, **ALICE})
    assert added.status_code == 201 and len(added.json()["items"]) == 2
    episodes = http.get("/v1/sessions/chat-7/episodes", params=ALICE).json()
    assert episodes["total"] == 1 and episodes["items"][0]["messages"][0]["content"] == "hello"
    assert http.get("/v1/sessions", params=ALICE).json()["total"] == 1

    assert http.delete("/v1/sessions/chat-7", params=ALICE).json() == {"deleted": 2}
    _assert_error(http.get("/v1/sessions/chat-7", params=ALICE), 404, "not_found")
    assert http.get("/v1/memories", params=ALICE).json()["total"] == 0
    _assert_error(http.get("/v1/sessions/nope/episodes", params=ALICE), 404, "not_found")


def test_session_ids_with_a_slash(http: httpx.Client) -> None:
    assert http.post("/v1/sessions", json={"session_id": "team/chat"}).status_code == 201
    assert http.get("/v1/sessions/team%2Fchat").json()["id"] == "team/chat"
    messages = {"messages": [{"content": "x"}]}
    assert http.post("/v1/sessions/team%2Fchat/episodes", json=messages).status_code == 201
    assert http.get("/v1/sessions/team%2Fchat/episodes").json()["total"] == 1


def _failed_job(server: Running) -> int:
    with server.engine.store.transaction() as tx:
        job_id = tx.jobs.enqueue_job(Scope(user_id="alice"), "no-such-kind", {}, max_attempts=1)
    deadline = time.monotonic() + 10
    while server.engine.job_counts()["failed"] == 0:
        assert time.monotonic() < deadline, "the worker did not fail the job"
        time.sleep(0.02)
    return job_id


def test_jobs(server: Running, http: httpx.Client) -> None:
    job_id = _failed_job(server)
    assert http.get("/v1/jobs/stats").json()["failed"] == 1
    assert http.get("/v1/jobs/stats", params={"user_id": "bob"}).json()["failed"] == 0
    failed = http.get("/v1/jobs", params={"state": "failed"}).json()["items"]
    assert [j["id"] for j in failed] == [job_id]
    assert "no handler" in failed[0]["last_error"]
    retried = http.post(f"/v1/jobs/{job_id}/retry").json()
    assert (retried["state"], retried["attempts"]) == ("pending", 0)
    _assert_error(http.post("/v1/jobs/999999/retry"), 404, "not_found")


def test_health_root_and_request_ids(http: httpx.Client) -> None:
    health = http.get("/health").json()
    assert health["status"] == "healthy"
    assert {"store", "embedder", "llm", "jobs", "version"} <= set(health)
    assert health["llm"]["status"] == "disabled" and health["store"]["schema_version"] >= 1
    root = http.get("/").json()
    assert root["name"] == "omoide"
    listed = {(e["method"], e["path"]) for e in root["routes"]}
    paths = http.get("/openapi.json").json()["paths"]
    assert listed == {(m.upper(), p) for p, ops in paths.items() for m in ops}
    assert set(root["endpoints"]) == {f"{m} {p}" for m, p in listed}
    echoed = http.get("/health", headers={"X-Request-ID": "trace-42"})
    assert echoed.headers["X-Request-ID"] == "trace-42"
    assert http.get("/health", headers={"X-Request-ID": "bad id!"}).headers["X-Request-ID"] != ""


def test_openapi_documents_every_route_with_examples(http: httpx.Client) -> None:
    spec = http.get("/openapi.json").json()
    schemas = spec["components"]["schemas"]
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            assert operation.get("description"), f"{method} {path} has no docstring"
            body = operation.get("requestBody")
            if body:
                ref = body["content"]["application/json"]["schema"]["$ref"].split("/")[-1]
                assert schemas[ref].get("examples"), f"{method} {path}: no body example"
    assert http.get("/docs").status_code == 200


def test_unknown_routes_and_methods_share_the_error_shape(http: httpx.Client) -> None:
    _assert_error(http.get("/v2/nothing"), 404, "not_found")
    _assert_error(http.put("/v1/memories"), 405, "method_not_allowed")


def test_unexpected_errors_are_500_with_a_request_id_and_no_traceback(
    server: Running, http: httpx.Client, monkeypatch: pytest.MonkeyPatch, caplog: Any
) -> None:
    def explode(*args: object, **kwargs: object) -> None:
        raise RuntimeError("secret internals /etc/shadow")

    monkeypatch.setattr(server.engine, "get", explode)
    with caplog.at_level(logging.ERROR, logger="omoide.api"):
        response = http.get("/v1/memories/abc")
    body = _assert_error(response, 500, "internal_error")
    assert "secret" not in response.text and "Traceback" not in response.text
    assert body["request_id"] in body["detail"]
    logged = [r for r in caplog.records if body["request_id"] in r.getMessage()]
    assert logged and logged[0].exc_info is not None


def test_extraction_options_need_an_llm(server: Running, http: httpx.Client) -> None:
    before = server.engine.store.admin.stats()
    asked = http.post("/v1/memories", json={"text": "I live in Porto", "infer": True})
    _assert_error(asked, 501, "feature_disabled")
    variables = [{"name": "city", "description": "Where the user lives"}]
    _assert_error(
        http.post("/v1/memories", json={"text": "x", "mem_variables": variables}),
        501,
        "feature_disabled",
    )
    assert server.engine.store.admin.stats() == before  # refused before storing anything
    plain = http.post("/v1/memories", json={"text": "in Porto", "infer": False, "wait": True})
    assert plain.status_code == 201
