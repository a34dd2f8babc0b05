"""Integers a request carries are bounded: out of range is a 422, never a 500 (issue 15, point 5).

``offset`` >= 2**63, huge job ids, JiuwenMemory ``page_idx`` and big integers in metadata or
metadata filters used to reach SQLite (64-bit) and fail there as a 500. Every integer parameter
and every place in a body where an integer can go, read from the real app's OpenAPI document,
gets 2**63 and -2**63-1.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from omoide.embed.protocol import Embedder
from tests.api.conftest import Running, running
from tests.api.openapi_walk import Schemas, dumps, operations, place

JSON = {"content-type": "application/json"}
OUT_OF_RANGE = [2**63, -(2**63) - 1]


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[Running]:
    with running(tmp_path_factory.mktemp("ints") / "ints.db", embedder) as server:
        server.engine.add("seed memory about tea", session_id="s1")
        yield server


@pytest.fixture(scope="module")
def spec(live: Running) -> dict[str, Any]:
    with live.http() as http:
        document: dict[str, Any] = http.get("/openapi.json").json()
    return document


def _is_integer(schema: dict[str, Any], schemas: Schemas) -> bool:
    return any(option.get("type") == "integer" for option in schemas.options(schema))


def _requests(spec: dict[str, Any]) -> Iterator[tuple[str, str, str, bytes | None]]:
    """(label, method, url, body) with one out-of-range integer each."""
    schemas = Schemas(spec)
    for op in operations(spec):
        required = {
            p["name"]: str(schemas.example(p["schema"])) for p in op.params if p.get("required")
        }
        baseline = dumps(schemas.example(op.body)) if op.body is not None else None
        for param in op.params:
            if _is_integer(param["schema"], schemas):
                for number in OUT_OF_RANGE:
                    url = op.url(required | {param["name"]: str(number)})
                    yield f"{op.name} {param['name']}={number}", op.method, url, baseline
        if op.body is None:
            continue
        for slot in schemas.slots(op.body, {"integer"}):
            for number in OUT_OF_RANGE:
                body = dumps(place(schemas, op.body, slot, number))
                label = f"{op.name} body.{'.'.join(map(str, slot))}={number}"
                yield label, op.method, op.url(required), body


def test_every_integer_input_out_of_range_is_a_422(live: Running, spec: dict[str, Any]) -> None:
    cases = list(_requests(spec))
    labels = " ".join(label for label, *_ in cases)
    for needle in ("offset=", "job_id=", "page_idx=", "metadata.k", "variables.k"):
        assert needle in labels, needle
    failures = []
    before = live.engine.store.admin.stats()
    with live.http() as http:
        for label, method, url, body in cases:
            response = http.request(method, url, content=body, headers=JSON)
            if response.status_code != 422:
                failures.append(f"{label}: {response.status_code} {response.text[:160]}")
    assert not failures, f"{len(failures)} of {len(cases)}:\n" + "\n".join(failures[:40])
    assert live.engine.store.admin.stats() == before


@pytest.mark.parametrize("number", OUT_OF_RANGE)
def test_big_integers_in_a_query_string_filter_are_a_422(live: Running, number: int) -> None:
    filters = json.dumps({"metadata": {"n": number}})
    with live.http() as http:
        response = http.get("/v1/memories", params={"filters": filters})
    assert response.status_code == 422, response.text
    assert "integer out of range" in response.json()["detail"]


def test_the_largest_allowed_values_work(live: Running) -> None:
    with live.http() as http:
        page = http.get("/v1/memories", params={"offset": 2**53 - 1})
        assert page.status_code == 200 and page.json()["items"] == []
        assert http.post(f"/v1/jobs/{2**63 - 1}/retry").status_code == 404
        body = {"user_id": "u", "page_idx": 10**9, "page_size": 10_000}
        assert http.post("/get_user_mem_by_page/", json=body).status_code == 200
        stored = http.post("/v1/memories", json={"text": "n", "metadata": {"n": 2**63 - 1}})
        assert stored.status_code == 201
        assert stored.json()["items"][0]["metadata"]["n"] == 2**63 - 1
        http.delete(f"/v1/memories/{stored.json()['items'][0]['id']}")
