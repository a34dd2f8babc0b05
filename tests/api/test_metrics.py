"""/metrics: off by default, behind the key, and parseable by prometheus_client's own parser."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from omoide import Memory
from omoide.embed.protocol import Embedder
from tests.api.conftest import KEY, Running

LIST_TOOLS = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}


def _samples(text: str) -> list[Sample]:
    return [s for family in text_string_to_metric_families(text) for s in family.samples]


def _value(samples: list[Sample], name: str, **labels: str) -> float:
    found = [s.value for s in samples if s.name == name and labels.items() <= s.labels.items()]
    assert len(found) == 1, (name, labels, found)
    return found[0]


def test_metrics_are_off_unless_enabled(server: Running) -> None:
    with server.http() as http:
        assert http.get("/metrics").status_code == 404


def test_metrics_need_the_key(start_server: Callable[..., Running]) -> None:
    keyed = start_server(api_key=KEY, metrics=True)
    with keyed.http() as anonymous, keyed.http(KEY) as admin:
        assert anonymous.get("/metrics").status_code == 401
        scrape = admin.get("/metrics")
    assert scrape.status_code == 200
    refused = {"method": "GET", "route": "/metrics", "status": "401"}  # refused before routing
    assert _value(_samples(scrape.text), "omoide_http_requests_total", **refused) == 1


def test_a_refused_request_counts_under_its_route(start_server: Callable[..., Running]) -> None:
    # The /v1 routes come from included routers: refused before routing, a fixed path of
    # theirs is still known by its path, not lumped with scans of unknown paths.
    keyed = start_server(api_key=KEY, metrics=True)
    with keyed.http() as anonymous, keyed.http(KEY) as admin:
        assert anonymous.post("/v1/memories/search", json={"query": "tea"}).status_code == 401
        assert anonymous.get("/v1/memories/some-id").status_code == 401
        samples = _samples(admin.get("/metrics").text)
    search = {"method": "POST", "route": "/v1/memories/search", "status": "401"}
    assert _value(samples, "omoide_http_requests_total", **search) == 1
    unknown = {"method": "GET", "route": "unmatched", "status": "401"}  # parameterised: no label
    assert _value(samples, "omoide_http_requests_total", **unknown) == 1


def test_scrape_counts_requests_by_route_template_and_status(
    start_server: Callable[..., Running], tmp_path: Path, embedder: Embedder
) -> None:
    # No workers: the queued job stays pending, so the queue gauge has something to show.
    engine = Memory(tmp_path / "metrics.db", embedder=embedder, workers=0)
    server = start_server(engine=engine, metrics=True)
    with server.http() as http:
        added = http.post("/v1/memories", json={"text": "I like tea", "session_id": "s1"})
        assert added.status_code == 201
        assert http.get("/v1/memories/nope").status_code == 404
        assert http.get("/v1/memories/also-nope").status_code == 404
        assert http.get("/no/such/route").status_code == 404
        queued = http.post("/v1/consolidation/jobs", json={"session_id": "s1"})
        assert queued.status_code == 202
        mcp = http.post(
            "/mcp", json=LIST_TOOLS, headers={"Accept": "application/json, text/event-stream"}
        )
        assert mcp.status_code == 200
        scrape = http.get("/metrics")
    assert scrape.status_code == 200 and scrape.headers["content-type"].startswith("text/plain")
    samples = _samples(scrape.text)

    template = {"method": "GET", "route": "/v1/memories/{memory_id}", "status": "404"}
    assert _value(samples, "omoide_http_requests_total", **template) == 2
    assert _value(samples, "omoide_http_request_duration_seconds_count", **template) == 2
    created = {"method": "POST", "route": "/v1/memories", "status": "201"}
    assert _value(samples, "omoide_http_requests_total", **created) == 1
    assert _value(samples, "omoide_http_requests_total", route="unmatched", status="404") == 1
    assert not [s for s in samples if "nope" in s.labels.get("route", "")]
    assert _value(samples, "omoide_http_requests_total", route="/mcp", status="200") == 1

    assert _value(samples, "omoide_jobs", state="pending") >= 1
    pending = [
        s for s in samples if s.name == "omoide_job_queue" and s.labels["state"] == "pending"
    ]
    assert sum(s.value for s in pending) == _value(samples, "omoide_jobs", state="pending")
    kinds = {job.kind for job in engine.list_jobs()}
    assert {s.labels["kind"] for s in pending} <= kinds and pending
    assert _value(samples, "omoide_component_up", component="store") == 1
    assert _value(samples, "omoide_store_bytes") > 0


def _series(text: str) -> set[tuple[str, tuple[tuple[str, str], ...]]]:
    return {(s.name, tuple(sorted(s.labels.items()))) for s in _samples(text)}


def _invented(http: httpx.Client, count: int, start: int) -> None:
    for n in range(start, start + count):
        http.request(f"X{n}", f"/v1/memories/{n}")
        http.request("GET", f"/no/such/{n}")
        http.request("BREW", f"/v1/sessions/{n}?user_id=u{n}")


def test_keyless_requests_cannot_grow_the_label_set(start_server: Callable[..., Running]) -> None:
    """Invented methods, paths and ids from a client without a key: the series do not grow."""
    server = start_server(api_key=KEY, metrics=True)
    with server.http() as anonymous, server.http(KEY) as admin:
        _invented(anonymous, 5, 0)
        first = _series(admin.get("/metrics").text)
        _invented(anonymous, 50, 5)
        second = admin.get("/metrics").text
    assert _series(second) - first <= {
        s for s in _series(second) if s[1] and ("route", "/metrics") in s[1]
    }
    methods = {s.labels["method"] for s in _samples(second) if "method" in s.labels}
    assert methods <= {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "other"}
    assert "other" in methods
    assert not [s for s in _samples(second) if re.search(r"\d", s.labels.get("route", ""))]


def test_a_tenant_bound_key_cannot_read_metrics(start_server: Callable[..., Running]) -> None:
    server = start_server(
        api_key=KEY, tenant_keys={"alice-key": {"user_id": "alice"}}, metrics=True
    )
    with server.http("alice-key") as alice, server.http(KEY) as admin:
        refused = alice.get("/metrics")
        assert refused.status_code == 403, refused.text
        assert "omoide_" not in refused.text
        assert admin.get("/metrics").status_code == 200
