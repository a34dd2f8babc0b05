"""Inputs an outside review found answered 500 (or silently wrong): metadata filter keys a
JSON path cannot name, and timestamps whose UTC instant is outside years 1-9999."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx
import pytest

from tests.api.conftest import KEY, Running

KEYS = ["类别", 'a"b', "a\\b", '"];drop', "a\tb", "a.b"]


@pytest.mark.parametrize("recipe", ["hybrid", "keyword", "vector", "hybrid_rrf"])
def test_a_metadata_filter_on_any_key_finds_that_memory(
    server: Running, http: httpx.Client, recipe: str
) -> None:
    ids = {}
    for key in KEYS:
        added = http.post("/v1/memories", json={"text": "green tea note", "metadata": {key: 1}})
        ids[key] = added.json()["items"][0]["id"]
    for key in KEYS:
        body = {"query": "green tea", "recipe": recipe, "filters": {"metadata": {key: 1}}}
        found = http.post("/v1/memories/search", json=body)
        assert found.status_code == 200, found.text
        assert [h["memory"]["id"] for h in found.json()["hits"]] == [ids[key]], key
        listed = http.get("/v1/memories", params={"filters": json.dumps({"metadata": {key: 1}})})
        assert [m["id"] for m in listed.json()["items"]] == [ids[key]], key


# A filter value means that JSON value: SQLite's json_extract gave an object as its JSON text
# and true as 1, so the string '{"b":1}' found the object {"b": 1} (PostgreSQL: nothing).
# "類" is a key a JSON path cannot name (looked up through json_each).
TYPED = {"obj": {"b": 1}, "arr": [1, 2], "yes": True, "one": 1, "text": "1", "類": {"b": 1}}
NOT_MATCHED = [
    {"obj": '{"b":1}'},
    {"arr": "[1,2]"},
    {"yes": 1},
    {"yes": "true"},
    {"one": "1"},
    {"text": 1},
    {"類": '{"b":1}'},
]
MATCHED = [{"yes": True}, {"one": 1}, {"one": 1.0}, {"one": True}, {"text": "1", "one": 1}]


@pytest.mark.parametrize("recipe", ["hybrid", "keyword"])
def test_a_metadata_filter_matches_only_a_value_of_its_json_type(
    http: httpx.Client, recipe: str
) -> None:
    added = http.post("/v1/memories", json={"text": "green tea note", "metadata": TYPED})
    mine = [added.json()["items"][0]["id"]]
    cases = [(wanted, []) for wanted in NOT_MATCHED] + [(wanted, mine) for wanted in MATCHED]
    for wanted, expected in cases:  # not `wanted in MATCHED`: Python has {"a": 1} == {"a": True}
        body = {"query": "green tea", "recipe": recipe, "filters": {"metadata": wanted}}
        hits = http.post("/v1/memories/search", json=body).json()["hits"]
        assert [h["memory"]["id"] for h in hits] == expected, wanted
        listed = http.get("/v1/memories", params={"filters": json.dumps({"metadata": wanted})})
        assert [m["id"] for m in listed.json()["items"]] == expected, wanted


@pytest.mark.parametrize("recipe", ["hybrid", "keyword", "vector"])
def test_too_many_metadata_filter_keys_is_a_422_naming_the_limit(
    server: Running, http: httpx.Client, recipe: str
) -> None:
    """One clause a key: a thousand keys passed SQLite's expression depth (a 500)."""
    http.post("/v1/memories", json={"text": "green tea note", "metadata": {"k0": 0}})
    many = {"metadata": {f"k{i}": i for i in range(1000)}}
    found = http.post(
        "/v1/memories/search", json={"query": "green tea", "recipe": recipe, "filters": many}
    )
    assert found.status_code == 422 and "100" in found.json()["detail"], found.text
    listed = http.get("/v1/memories", params={"filters": json.dumps(many)})
    assert listed.status_code == 422, listed.text
    at_limit = {"metadata": {f"k{i}": i for i in range(100)}}
    body = {"query": "green tea", "recipe": recipe, "filters": at_limit}
    assert http.post("/v1/memories/search", json=body).json()["hits"] == []


# Valid ISO 8601 with an offset, but a year 10000 or year 0 instant in UTC.
EDGES = ["9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+14:00"]


@pytest.mark.parametrize("at", EDGES)
@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/memories", lambda at: {"text": "x", "timestamp": at}),
        ("/v1/memories", lambda at: {"messages": [{"content": "x", "timestamp": at}]}),
        ("/add_messages/", lambda at: {"messages": [{"content": "x"}], "timestamp": at}),
        ("/add_messages/", lambda at: {"messages": [{"content": "x", "timestamp": at}]}),
    ],
)
def test_a_timestamp_outside_the_calendar_in_utc_is_a_422(
    server: Running, http: httpx.Client, path: str, body: object, at: str
) -> None:
    reply = http.post(path, json=body(at))  # type: ignore[operator]
    assert reply.status_code == 422, reply.text
    assert "timestamp" in reply.json()["detail"]
    assert server.engine.store.admin.stats()["memories"] == 0


# FTS5 cuts a token at 32,768 bytes; a run of 3-byte letters with no space (Thai is written
# so) was cut inside a character. The add failed, and the tokenizer every tenant shares kept
# the half-done row: every later add and search of the server failed until a restart.
THAI_RUN = "ก" * 11_000


def test_a_token_longer_than_fts5_keeps_every_tenant_working(
    start_server: Callable[..., Running],
) -> None:
    server = start_server(api_key=KEY, tenant_keys={"eve": {"user_id": "eve"}})
    with server.http("eve") as eve, server.http(KEY) as admin:
        assert eve.post("/v1/memories", json={"text": THAI_RUN}).status_code == 201
        found = eve.post("/v1/memories/search", json={"query": THAI_RUN, "recipe": "keyword"})
        assert found.status_code == 200, found.text
        cjk = eve.post("/v1/memories/search", json={"query": "語" * 11_000})
        assert cjk.status_code == 200, cjk.text
        added = admin.post("/v1/memories", json={"text": "bob likes tea", "user_id": "bob"})
        assert added.status_code == 201, added.text
        body = {"query": "tea", "user_id": "bob", "recipe": "keyword"}
        hits = admin.post("/v1/memories/search", json=body).json()["hits"]
        assert [h["memory"]["text"] for h in hits] == ["bob likes tea"]


# Every log line and error message passes through omoide.redact, whose URL patterns tried a
# scheme at each position of a long letter run and scanned on from there: quadratic, with the
# interpreter lock held, so one request naming a long value froze the server for everyone
# (900,000 characters: most of an hour). The client's timeout is far above what the fixed
# server takes.
LONG = 120_000


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/get_user_mem_by_page/", {"memory_type": "x" * LONG}),  # logged as unknown
        ("/update_mem_by_id/", {"mem_id": "x" * LONG, "memory": "m"}),  # 404 naming it
        ("/update_mem_by_id/", {"mem_id": "a://" * (LONG // 4), "memory": "m"}),
        ("/update_mem_by_id/", {"mem_id": "a://" + "b:" * (LONG // 2), "memory": "m"}),
    ],
    ids=["logged", "error", "schemes", "colons"],
)
def test_a_long_value_in_a_log_line_or_error_does_not_stall_the_server(
    start_server: Callable[..., Running], path: str, body: dict[str, object]
) -> None:
    server = start_server(max_body_bytes=1 << 20)  # the default limit, not the tests' own
    with httpx.Client(base_url=server.url, timeout=15) as http:
        reply = http.post(path, json=body)
        assert reply.status_code in (200, 404), reply.text[:200]
        assert http.get("/health").status_code == 200


@pytest.mark.postgres_gap(
    "PostgreSQL's parser indexes no word over 2,047 characters: a run of 11,000 Thai letters"
    " is found by its vector there, not by its words"
)
def test_a_word_longer_than_fts5s_token_is_found_by_its_words(
    start_server: Callable[..., Running],
) -> None:
    server = start_server(api_key=KEY, tenant_keys={"eve": {"user_id": "eve"}})
    with server.http("eve") as eve:
        assert eve.post("/v1/memories", json={"text": THAI_RUN}).status_code == 201
        found = eve.post("/v1/memories/search", json={"query": THAI_RUN, "recipe": "keyword"})
        assert [h["memory"]["text"] for h in found.json()["hits"]] == [THAI_RUN]
