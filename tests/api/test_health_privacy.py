"""What ``/health`` tells whom (issue 15, point 6).

A tenant-bound key sees neither the database path nor other tenants' job counts; the embedding
probe (``?probe=true``, one embed per call) needs a key when a key is configured.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from omoide import Memory
from omoide.config import Settings
from omoide.embed.protocol import Embedder
from omoide.redact import redact
from omoide.store.protocol import NewMemory
from omoide.types import MemoryType, Scope
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
    # the full key sees where the data is, with a URL's credentials and query masked
    shown = redact(str(keyed.engine.store.location))
    assert status == 200 and shown in str(full)
    bound_status, bound = _health(keyed, "alice-key")
    assert bound_status == 200
    assert shown not in str(bound) and str(keyed.engine.store.location) not in str(bound)
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


# issue 36, finding 6: MCP health_check as /health; the markdown files' detail ----------------
def test_mcp_health_check_shows_a_bound_key_no_path_and_only_its_jobs(keyed: Running) -> None:
    from tests.mcp.conftest import data, http_client, run

    async def script(key: str) -> Any:
        async with http_client(keyed.url, key) as client:
            return data(await client.call_tool("health_check", {}))

    bound = run(lambda: script("alice-key"))
    full = run(lambda: script(KEY))
    location = redact(str(keyed.engine.store.location))  # credentials and query masked
    assert location in json.dumps(full) and location not in json.dumps(bound)
    assert sum(full["jobs"].values()) >= 1  # bob's job
    assert bound["jobs"] == keyed.engine.job_counts(scope=Scope(user_id="alice"))
    assert bound["ready"] is True and bound["status"] == full["status"]


def test_a_bound_key_sees_nothing_of_the_markdown_files_of_others(
    start_server: Callable[..., Running], tmp_path: Path, embedder: Embedder
) -> None:
    root = tmp_path / "files"
    settings = Settings(index_backend="file", file_memory_data_dir=root)
    engine = Memory(tmp_path / "m.db", embedder=embedder, settings=settings, workers=0)
    server = start_server(engine=engine, api_key=KEY, tenant_keys=TENANT_KEYS)
    note = NewMemory(text="bob-private-note", type=MemoryType.SEMANTIC)
    engine.add_many([note], user_id="bob-the-other", scope_id="bobs-scope")
    mirror = engine.engine.services.mirror
    assert mirror is not None
    mirror.stop()  # no watcher: the read below checks the files itself, no race with a thread
    [bobs] = list((root / "memories" / "bob-the-other").rglob("*.md"))
    bobs.write_text(bobs.read_text("utf-8") + "\nnot a list item\n", "utf-8")
    engine.get_all(user_id="bob-the-other", scope_id="bobs-scope")  # finds the problem
    _, full = _health(server, KEY)
    assert "bob-the-other" in json.dumps(full) and str(root) in json.dumps(full)
    _, bound = _health(server, "alice-key")
    text = json.dumps(bound)
    assert "bob-the-other" not in text and "bobs-scope" not in text and str(root) not in text
    assert bound["files"] == {"status": "degraded"}
