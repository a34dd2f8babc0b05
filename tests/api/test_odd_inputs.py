"""Inputs an outside review found answered 500 (or silently wrong): metadata filter keys a
JSON path cannot name, and timestamps whose UTC instant is outside years 1-9999."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.api.conftest import Running

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
