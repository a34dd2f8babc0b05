"""INDEX_BACKEND=file over real HTTP, through the JiuwenMemory routes: a memory a person typed
into ``semantic_memory.md`` is found by ``/search_memory/``; the routes' updates and deletes
reach the file; ``/health`` reports a block it could not read."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from omoide.embed.protocol import Embedder
from omoide.engine.mirror.format import parse
from tests.api.conftest import Running, running
from tests.mirror.conftest import open_memory

TENANT = {"user_id": "user_001", "scope_id": "demo"}


@pytest.fixture
def server(tmp_path: Path, embedder: Embedder) -> Iterator[Running]:
    db, root = tmp_path / "omoide.db", tmp_path / "file_memory_data"
    with running(db, embedder, engine=open_memory(db, root, embedder)) as live:
        yield live


def _file(server: Running) -> Path:
    mirror = server.engine.engine.services.mirror
    assert mirror is not None
    return mirror.root / "memories" / "user_001" / "demo" / "semantic_memory.md"


def test_the_file_backend_over_the_jiuwen_routes(server: Running) -> None:
    path = _file(server)
    path.parent.mkdir(parents=True)
    path.write_text("# semantic_memory\n\n- I like jasmine tea\n- 我住在深圳\n", "utf-8")
    with server.http() as http:
        found = http.post(
            "/search_memory/",
            json={"query": "What tea does the user like?", "num": 5, **TENANT, "threshold": 0.3},
        ).json()
        best = found["results"][0]
        assert (best["content"], best["type"]) == ("I like jasmine tea", "semantic_memory")
        mem_id = best["mem_id"]
        assert f"- I like jasmine tea <!-- id:{mem_id} -->" in path.read_text("utf-8")

        body = {"mem_id": mem_id, "memory": "I like oolong tea", **TENANT}
        assert http.post("/update_mem_by_id/", json=body).json()["status"] == "success"
        texts = {i.memory_id: i.text for i in parse(path.read_text("utf-8")).items}
        assert texts[mem_id] == "I like oolong tea"
        page = _page(http)
        assert sorted(m["content"] for m in page) == ["I like oolong tea", "我住在深圳"]

        assert http.post("/delete_mem_by_id/", json={"mem_id": mem_id, **TENANT}).status_code == 200
        assert "oolong" not in path.read_text("utf-8")
        assert [m["content"] for m in _page(http)] == ["我住在深圳"]

        path.write_text(path.read_text("utf-8") + "\nnot a list item\n", "utf-8")
        _page(http)
        health = http.get("/health").json()
        assert health["status"] == "degraded"
        assert health["files"]["status"] == "degraded"
        [problem] = health["files"]["problems"]
        assert problem["file"] == "semantic_memory.md"
        assert "not a list item" in path.read_text("utf-8")


def _page(http: httpx.Client) -> list[dict[str, str]]:
    body = {**TENANT, "page_size": 10, "page_idx": 1, "memory_type": "semantic_memory"}
    reply = http.post("/get_user_mem_by_page/", json=body)
    assert reply.status_code == 200, reply.text
    memories: list[dict[str, str]] = reply.json()["results"]
    return memories
