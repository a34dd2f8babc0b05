"""The standing guard (issue 36): every route the app registers, and every MCP tool its server
lists, discovered from the app itself (documented or not: /metrics, /mcp, the docs' assets, the
compat routes), so a route is covered the day it lands.

- Without a key (or with a wrong one) every route that is not open answers 401.
- With alice's tenant-bound key, every route and tool, asked for bob (his user id in the query
  and the body, his memory id and session id in the path), answers below 500 and never shows
  anything of bob's: his marker text is in no reply.

``tests/api/test_auth.py`` holds the matrix of the documented routes with hand-written bodies;
this suite is the catch-all beside it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI

from omoide import Memory
from omoide.api.auth import OPEN_PREFIXES, OPEN_ROUTES
from omoide.embed.protocol import Embedder
from omoide.serve.app import create_app
from tests.api.conftest import KEY, Running, make_settings, running
from tests.mcp.conftest import http_client, run

MARKER = "bobs-unguessable-marker"
KEYS = {"alice-key": {"user_id": "alice"}, "bob-key": {"user_id": "bob"}}
SETTINGS = {"api_key": KEY, "tenant_keys": KEYS, "metrics": True}
ANY_METHOD = ("GET", "POST", "DELETE")  # a plain route (/mcp) takes what its app takes


def _walk(routes: list[Any], prefix: str, found: set[tuple[str, str]]) -> None:
    for route in routes:
        if hasattr(route, "effective_candidates"):  # FastAPI's included router
            _walk(list(route.effective_candidates()), prefix, found)
        elif hasattr(route, "routes") and getattr(route, "methods", None) is None:
            _walk(route.routes, prefix + getattr(route, "path", ""), found)  # a Mount
        elif isinstance(getattr(route, "path", None), str):
            methods = getattr(route, "methods", None) or ANY_METHOD
            found.update((m, prefix + route.path) for m in methods)


def registered(app: FastAPI) -> list[tuple[str, str]]:
    """Every (method, path template) the app answers, HEAD aside."""
    found: set[tuple[str, str]] = set()
    _walk(list(app.routes), "", found)
    return sorted((m, p) for m, p in found if m != "HEAD")


ROUTES = registered(create_app(make_settings(**SETTINGS)))


def _open(method: str, path: str) -> bool:
    return (method, path) in OPEN_ROUTES or (
        method == "GET" and any(path == p or path.startswith(p + "/") for p in OPEN_PREFIXES)
    )


def _concrete(path: str, memory_id: str) -> str:
    def value(match: re.Match[str]) -> str:
        name = match.group(1).split(":")[0]
        return "bob-session" if ("session" in name or "discussion" in name) else memory_id

    return re.sub(r"\{([^}]+)\}", value, path)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[Running]:
    db: Path = tmp_path_factory.mktemp("guard") / "guard.db"
    engine = Memory(db, embedder=embedder, workers=1)
    with running(db, embedder, engine=engine, **SETTINGS) as live:
        yield live


@pytest.fixture(scope="module")
def bobs_memory(server: Running) -> str:
    [item] = server.engine.add(
        f"{MARKER}: bob keeps the spare key under the flowerpot",
        user_id="bob",
        session_id="bob-session",
        infer=False,
    )
    server.engine.update_variables({"secret": MARKER}, user_id="bob")
    return item.id


def test_the_walk_finds_the_undocumented_routes_too() -> None:
    paths = {p for _, p in ROUTES}
    assert {"/metrics", "/mcp", "/docs/swagger-ui.css"} <= paths
    assert any(p.startswith("/v1/discussions") for p in paths)  # WilmerAI
    assert "/add_messages/" in paths and "/episodes/search" in paths  # JiuwenMemory, nexusAI


@pytest.mark.parametrize(("method", "path"), [r for r in ROUTES if not _open(*r)], ids=str)
@pytest.mark.parametrize("key", [None, "not-the-key"])
def test_every_route_refuses_a_request_without_a_valid_key(
    server: Running, method: str, path: str, key: str | None
) -> None:
    with server.http(key) as http:
        reply = http.request(method, _concrete(path, "some-id"), json={})
    assert reply.status_code == 401, reply.text


# GET /mcp is the MCP server's event stream, which stays open: the tools are checked below.
@pytest.mark.parametrize(("method", "path"), [r for r in ROUTES if r != ("GET", "/mcp")], ids=str)
def test_no_route_shows_a_bound_key_another_tenants_data(
    server: Running, bobs_memory: str, method: str, path: str
) -> None:
    url = _concrete(path, bobs_memory)
    params = {"user_id": "bob", "scope_id": "default"}
    body = {"user_id": "bob", "scope_id": "default", "query": "flowerpot", "mem_id": bobs_memory}
    with server.http("alice-key") as alice:
        reply = alice.request(method, url, params=params, json=body)
        bare = alice.request(method, url, json={})  # no tenant named: the key's own
    for answer in (reply, bare):
        assert answer.status_code < 500, answer.text
        assert MARKER not in answer.text, f"{method} {url} showed bob's data"
    with server.http("bob-key") as bob:  # bob himself still reads it: the check can fail
        assert MARKER in bob.get(f"/v1/memories/{bobs_memory}").text


def _arguments(schema: dict[str, Any], memory_id: str) -> dict[str, Any]:
    """Bob's ids where a tool takes them, a plausible value for each other required field."""
    values: dict[str, Any] = {"user_id": "bob", "scope_id": "default"}
    for name, spec in schema.get("properties", {}).items():
        if name in values or name not in schema.get("required", []):
            continue
        kind = spec.get("type") or next(
            (s.get("type") for s in spec.get("anyOf", []) if s.get("type") != "null"), "string"
        )
        values[name] = {
            "string": "bob-session" if "session" in name else memory_id,
            "integer": 1,
            "number": 1,
            "boolean": False,
            "array": [memory_id] if name.endswith("ids") or name == "names" else [],
            "object": {},
        }.get(kind, memory_id)
    return values


def test_no_mcp_tool_shows_a_bound_key_another_tenants_data(
    server: Running, bobs_memory: str
) -> None:
    async def script() -> list[tuple[str, bool, str]]:
        out = []
        async with http_client(server.url, "alice-key") as alice:
            tools = (await alice.list_tools()).tools
            assert len(tools) >= 10
            for tool in tools:
                arguments = _arguments(tool.input_schema, bobs_memory)
                result = await alice.call_tool(tool.name, arguments)
                text = " ".join(getattr(c, "text", "") for c in result.content)
                out.append((tool.name, bool(result.is_error), text))
        return out

    results = run(script)
    leaks = [name for name, _, text in results if MARKER in text]
    assert leaks == []
    assert any(is_error and "cannot access" in text for _, is_error, text in results)
