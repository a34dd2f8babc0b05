"""Bad input on every route family: a 4xx with a message naming the problem, store unchanged."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest

from omoide.embed.protocol import Embedder
from tests.api.conftest import BODY_LIMIT, Running, running

MID = "{memory}"  # replaced by the id of a memory that exists
JSON = {"content-type": "application/json"}

# (method, path, request kwargs, expected status, text the message must contain)
CASES: list[tuple[str, str, dict[str, Any], int, str]] = [
    # memories
    ("POST", "/v1/memories", {"json": {"text": 123}}, 422, "body.text"),
    ("POST", "/v1/memories", {"json": {"text": "x", "colour": "red"}}, 422, "body.colour"),
    ("POST", "/v1/memories", {"json": {}}, 422, "messages` or `text"),
    ("POST", "/v1/memories", {"json": {"text": "   "}}, 422, "must not be empty"),
    ("POST", "/v1/memories", {"json": {"text": "a\x00b"}}, 422, "NUL"),
    ("POST", "/v1/memories", {"json": {"messages": [{"role": "user"}]}}, 422, "content"),
    ("POST", "/v1/memories", {"json": {"messages": "hi"}}, 422, "body.messages"),
    ("POST", "/v1/memories", {"json": {"text": "x", "type": "dream"}}, 422, "body.type"),
    ("POST", "/v1/memories", {"json": {"text": "x", "user_id": ""}}, 422, "body.user_id"),
    ("POST", "/v1/memories", {"json": {"text": "x", "metadata": []}}, 422, "body.metadata"),
    ("POST", "/v1/memories", {"json": ["text"]}, 422, "body"),
    ("POST", "/v1/memories", {"json": {"text": "x", "timeout": 0}}, 422, "body.timeout"),
    ("POST", "/v1/memories", {"json": {"text": "x", "infer": "maybe"}}, 422, "body.infer"),
    (
        "POST",
        "/v1/memories",
        {"json": {"text": "x", "mem_variables": [{"name": "city", "descripton": "typo"}]}},
        422,
        "mem_variables.0.descripton",
    ),
    ("POST", "/v1/memories", {"content": b"not json", "headers": JSON}, 422, "not valid JSON"),
    ("POST", "/v1/memories", {"content": b'{"text": "x"', "headers": JSON}, 422, "JSON"),
    ("POST", "/v1/memories", {"content": b'{"text": "\xff\xfe"}', "headers": JSON}, 400, "UTF-8"),
    ("POST", "/v1/memories", {"content": b'{"text": "x"}'}, 415, "application/json"),
    ("POST", "/v1/memories", {"data": {"text": "x"}}, 415, "application/json"),
    ("POST", "/v1/memories", {"json": {"text": "x" * BODY_LIMIT}}, 413, "limit"),
    ("POST", "/v1/memories/search", {"json": {}}, 422, "body.query"),
    ("POST", "/v1/memories/search", {"json": {"query": "x", "limit": 0}}, 422, "body.limit"),
    ("POST", "/v1/memories/search", {"json": {"query": "x", "limit": -3}}, 422, "body.limit"),
    ("POST", "/v1/memories/search", {"json": {"query": "x", "limit": "many"}}, 422, "limit"),
    ("POST", "/v1/memories/search", {"json": {"query": "x", "filters": {"a": 1}}}, 422, "a"),
    ("POST", "/v1/memories/search", {"json": {"query": "x", "recipe": "magic"}}, 422, "magic"),
    ("POST", "/v1/memories/search", {"json": {"query": ""}}, 422, "query"),
    ("GET", "/v1/memories", {"params": {"limit": 0}}, 422, "query.limit"),
    ("GET", "/v1/memories", {"params": {"limit": -1}}, 422, "query.limit"),
    ("GET", "/v1/memories", {"params": {"limit": "ten"}}, 422, "query.limit"),
    ("GET", "/v1/memories", {"params": {"offset": -1}}, 422, "query.offset"),
    ("GET", "/v1/memories", {"params": {"filters": "{nope"}}, 422, "query.filters"),
    ("GET", "/v1/memories", {"params": {"filters": '{"types": ["x"]}'}}, 422, "types"),
    ("GET", "/v1/memories", {"params": {"usr_id": "alice"}}, 422, "query.usr_id"),
    ("GET", f"/v1/memories/{MID}", {"params": {"scope": "x"}}, 422, "query.scope"),
    ("PATCH", f"/v1/memories/{MID}", {"json": {"text": 5}}, 422, "body.text"),
    ("PATCH", f"/v1/memories/{MID}", {"json": {}}, 422, "text or metadata"),
    ("PATCH", f"/v1/memories/{MID}", {"json": {"txt": "x"}}, 422, "body.txt"),
    ("DELETE", "/v1/memories", {}, 422, "query.user_id"),
    ("DELETE", "/v1/memories", {"params": {"user_id": "alice"}}, 422, "query.scope_id"),
    # sessions and episodes
    ("POST", "/v1/sessions", {"json": {}}, 422, "body.session_id"),
    ("POST", "/v1/sessions", {"json": {"session_id": 5}}, 422, "body.session_id"),
    ("POST", "/v1/sessions", {"json": {"session_id": ""}}, 422, "body.session_id"),
    ("POST", "/v1/sessions", {"json": {"session_id": "s", "nam": "x"}}, 422, "body.nam"),
    ("POST", "/v1/sessions", {"content": b"\xc3\x28", "headers": JSON}, 400, "UTF-8"),
    ("PATCH", "/v1/sessions/s1", {"json": {"name": 5}}, 422, "body.name"),
    ("PATCH", "/v1/sessions/s1", {"json": {"metadata": "x"}}, 422, "body.metadata"),
    ("GET", "/v1/sessions", {"params": {"limit": 0}}, 422, "query.limit"),
    ("GET", "/v1/sessions", {"params": {"offset": -5}}, 422, "query.offset"),
    ("POST", "/v1/sessions/s1/episodes", {"json": {"messages": []}}, 422, "body.messages"),
    ("POST", "/v1/sessions/s1/episodes", {"json": {}}, 422, "body.messages"),
    ("POST", "/v1/sessions/s1/episodes", {"json": {"messages": [{"content": 1}]}}, 422, "content"),
    ("GET", "/v1/sessions/s1/episodes", {"params": {"limit": 0}}, 422, "query.limit"),
    # jobs
    ("GET", "/v1/jobs", {"params": {"limit": 0}}, 422, "query.limit"),
    ("GET", "/v1/jobs", {"params": {"state": "sleeping"}}, 422, "query.state"),
    ("GET", "/v1/jobs/stats", {"params": {"verbose": 1}}, 422, "query.verbose"),
    ("POST", "/v1/jobs/abc/retry", {}, 422, "path.job_id"),
]


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[Running]:
    with running(tmp_path_factory.mktemp("bad") / "bad.db", embedder) as server:
        server.engine.create_session("s1")
        server.engine.add("seed memory", session_id="s1")
        yield server


def _case_id(case: tuple[str, str, dict[str, Any], int, str]) -> str:
    return f"{case[0]} {case[1]} {case[3]} {case[4]}"


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_bad_input_is_a_4xx_with_a_message_and_changes_nothing(
    seeded: Running, case: tuple[str, str, dict[str, Any], int, str]
) -> None:
    method, path, kwargs, status, needle = case
    memory_id = seeded.engine.get_all().items[0].id
    before = seeded.engine.store.admin.stats()
    with seeded.http() as http:
        response = http.request(method, path.replace(MID, memory_id), **kwargs)
    assert response.status_code == status, response.text
    body = response.json()
    assert needle in body["detail"], body
    assert body["error"]["code"] and body["request_id"]
    assert seeded.engine.store.admin.stats() == before


def _chunks(total: int) -> Iterator[bytes]:
    yield b'{"text": "'
    for _ in range(total // 4096):
        yield b"y" * 4096
    yield b'"}'


def test_a_streamed_body_over_the_limit_is_413(seeded: Running) -> None:
    before = seeded.engine.store.admin.stats()
    with seeded.http() as http:
        # A generator body is sent chunked, without Content-Length: the bytes are counted.
        response = http.post("/v1/memories", content=_chunks(2 * BODY_LIMIT), headers=JSON)
        assert response.status_code == 413 and "limit" in response.json()["detail"]
        assert "content-length" not in response.request.headers
        ok = http.post("/v1/memories", content=_chunks(BODY_LIMIT // 2), headers=JSON)
        assert ok.status_code == 201
    assert seeded.engine.store.admin.stats()["memories"] == before["memories"] + 1
    seeded.engine.delete(ok.json()["items"][0]["id"])


def test_a_declared_length_over_the_limit_is_refused_before_reading(seeded: Running) -> None:
    host, port = seeded.url.removeprefix("http://").split(":")
    head = (
        "POST /v1/memories HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        "Content-Length: 1000000000\r\n\r\n"
    )
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(head.encode())  # and not one byte of the announced gigabyte
        reply = sock.recv(65536).decode()
    assert reply.startswith("HTTP/1.1 413"), reply


def test_every_native_route_family_has_bad_input_cases(seeded: Running) -> None:
    with seeded.http() as http:
        paths = http.get("/openapi.json").json()["paths"]
    families = {p.split("/")[2] for p in paths if p.startswith("/v1/")}
    covered = {p.split("/")[2] for _, p, *_ in CASES}
    assert {"memories", "sessions", "jobs"} <= covered <= families
