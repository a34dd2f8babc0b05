"""One default tenant: what a caller writes without naming a tenant, through any door (/v1,
JiuwenMemory's routes, MCP, the CLI), every other door reads without naming one. JiuwenMemory's
``"__default__"`` is omoide's default tenant on the wire. A live server on a real SQLite file,
the MCP SDK's client over HTTP, and the CLI on the same file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from omoide.cli import app, state
from omoide.embed import HashEmbedder
from tests.api.conftest import Running, running
from tests.mcp.conftest import data, http_client, run

WRITTEN = ["through v1", "through jiuwen", "through mcp", "through the cli"]


def _ok(response: httpx.Response) -> Any:
    assert response.status_code in (200, 201), response.text
    return response.json()


def _mcp(server: Running, tool: str, arguments: dict[str, Any]) -> Any:
    async def call() -> Any:
        async with http_client(server.url) as client:
            return data(await client.call_tool(tool, arguments))

    return run(call)


def _cli(db: Path, *args: str) -> str:
    state.settings = None
    state.db = None
    result = CliRunner().invoke(app, [*args, "--db", str(db)])
    assert result.exit_code == 0, result.stderr
    return result.stdout


@pytest.fixture
def door_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMOIDE_EMBEDDER", "hash")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("OMOIDE_DATA_DIR", str(tmp_path / "data"))


@pytest.mark.usefixtures("door_env")
def test_every_door_reads_what_another_wrote_without_a_tenant(tmp_path: Path) -> None:
    db = tmp_path / "doors.db"
    with running(db, HashEmbedder()) as server, server.http() as http:
        _ok(http.post("/v1/memories", json={"text": "through v1"}))
        _ok(http.post("/add_messages/", json={"messages": [{"content": "through jiuwen"}]}))
        _mcp(
            server,
            "add_messages",
            {"messages": [{"role": "user", "content": "through mcp"}], "infer": False},
        )
        _cli(db, "add", "through the cli")

        seen = {
            "v1": [m["text"] for m in _ok(http.get("/v1/memories"))["items"]],
            "jiuwen": [
                m["content"] for m in _ok(http.post("/get_user_mem_by_page/", json={}))["results"]
            ],
            "mcp": [m["content"] for m in _mcp(server, "get_memories", {})["results"]],
            "cli": [m["text"] for m in json.loads(_cli(db, "list", "--json"))["items"]],
        }
        stored = server.engine.get_all(user_id="default", scope_id="default")
    for door, texts in seen.items():
        assert sorted(texts) == sorted(WRITTEN), door
    assert sorted(m.text for m in stored.items) == sorted(WRITTEN)


@pytest.mark.usefixtures("door_env")
def test_jiuwen_shows_the_default_tenant_as___default__(tmp_path: Path) -> None:
    with running(tmp_path / "wire.db", HashEmbedder()) as server, server.http() as http:
        _ok(http.post("/add_messages/", json={"messages": [{"content": "hello"}]}))
        omitted = _ok(http.post("/admin/messages/query", json={}))
        named = _ok(
            http.post(
                "/admin/messages/query", json={"user_id": "__default__", "scope_id": "__default__"}
            )
        )
        assert omitted == named and omitted["total"] == 1
        turn = omitted["items"][0]
        assert (turn["user_id"], turn["scope_id"], turn["content"]) == (
            "__default__",
            "__default__",
            "hello",
        )
        stored = server.engine.get_all(user_id="default", scope_id="default").items
        assert [m.text for m in stored] == ["hello"]
