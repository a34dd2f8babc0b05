"""Issue 36, "Also": ``/health`` said healthy with an unreachable remote embedder at start.

A real server built from its settings (``OMOIDE_EMBEDDER=openai``) whose embedder URL points
at a closed loopback port, then at a real fake OpenAI-compatible server: ``/health`` and the MCP
``health_check`` tool (one view) say ``degraded`` with the reason, never a secret of the URL or
the key, to any key; and ``healthy`` once the embedder answers.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from omoide.serve.app import create_app
from tests.api.conftest import KEY, LiveServer, make_settings
from tests.fakes import FakeLLMServer
from tests.mcp.conftest import data, http_client, run

TENANT_KEYS = {"alice-key": {"user_id": "alice"}}
SECRETS = ("pw-in-url", "q-in-url", "sk-embed-secret-123")


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def _with_secrets(base: str, *, query: bool = True) -> str:
    """``base`` (``http://127.0.0.1:PORT/v1``) with a password (and a query value) in it."""
    with_password = base.replace("http://", "http://embedder:pw-in-url@")
    return with_password + "?api_key=q-in-url" if query else with_password


@contextmanager
def serving(tmp_path: Path, embed_api_base: str) -> Iterator[str]:
    """``omoide serve``'s app over a new database, its embedder built from the settings."""
    settings = make_settings(
        db_url=f"sqlite:///{tmp_path / 'health.db'}",
        data_dir=tmp_path,
        embedder="openai",
        embed_api_base=embed_api_base,
        embed_api_key="sk-embed-secret-123",
        embed_model="fake-model",
        llm_base_url=None,
        workers=0,
        api_key=KEY,
        tenant_keys=TENANT_KEYS,
    )
    live = LiveServer(create_app(settings)).start()
    try:
        yield live.url
    finally:
        live.stop()


def _health(url: str, key: str | None) -> dict[str, Any]:
    import httpx

    headers = {"Authorization": f"Bearer {key}"} if key else {}
    reply = httpx.get(f"{url}/health", headers=headers, timeout=60)
    assert reply.status_code == 200, reply.text
    body: dict[str, Any] = reply.json()
    return body


def _mcp_health(url: str, key: str) -> dict[str, Any]:
    async def script() -> Any:
        async with http_client(url, key) as client:
            return data(await client.call_tool("health_check", {}))

    found: dict[str, Any] = run(script)
    return found


def _without_age(part: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in part.items() if k != "checked_s_ago"}


def test_an_unreachable_embedder_at_start_is_not_healthy_and_no_door_shows_its_secrets(
    tmp_path: Path,
) -> None:
    port = _closed_port()
    with serving(tmp_path, _with_secrets(f"http://127.0.0.1:{port}/v1")) as url:
        views = {key: _health(url, key) for key in (KEY, "alice-key", None)}
        tools = {key: _mcp_health(url, key) for key in (KEY, "alice-key")}
    for key, view in views.items():
        assert view["status"] == "degraded", (key, view)
        assert view["embedder"]["status"] == "down", (key, view)
        text = json.dumps(view)
        assert not any(secret in text for secret in SECRETS), (key, text)
    assert views[None]["embedder"] == {"status": "down"}  # without a key: statuses only
    reason = views[KEY]["embedder"]["error"]
    assert "openai-compat/fake-model" in reason and f"127.0.0.1:{port}" in reason
    assert views["alice-key"]["embedder"]["error"] == reason  # the same, redacted, reason
    for key, tool in tools.items():  # MCP health_check: the same view
        assert tool["status"] == "degraded" and tool["ready"] is True, (key, tool)
        assert _without_age(tool["embedder"]) == _without_age(views[key]["embedder"])
        assert not any(secret in json.dumps(tool) for secret in SECRETS), (key, tool)


def test_health_turns_healthy_when_the_embedder_answers(tmp_path: Path) -> None:
    with FakeLLMServer() as fake:
        with fake.down(), serving(tmp_path, _with_secrets(fake.url, query=False)) as url:
            assert _health(url, KEY)["status"] == "degraded"
        with serving(tmp_path, _with_secrets(fake.url, query=False)) as url:
            view = _health(url, KEY)
            tool = _mcp_health(url, "alice-key")
        asked = [r["input"] for r in fake.embedding_requests]
    assert view["status"] == "healthy", json.dumps(view)
    assert view["embedder"]["status"] == "ok" and "error" not in view["embedder"]
    assert tool["status"] == "healthy" and tool["embedder"]["status"] == "ok"
    assert asked == [["ping"]]  # one small request, the second look served from the cache


def test_a_server_whose_embedder_comes_back_says_healthy_after_a_real_embed(
    tmp_path: Path,
) -> None:
    with FakeLLMServer() as fake, serving(tmp_path, _with_secrets(fake.url, query=False)) as url:
        with fake.down():
            assert _health(url, KEY)["embedder"]["status"] == "down"
        # the embedder is back: the next write embeds for real, and /health takes its word
        import httpx

        added = httpx.post(
            f"{url}/v1/memories",
            json={"text": "Mei likes jasmine tea", "user_id": "alice"},
            headers={"Authorization": f"Bearer {KEY}"},
            timeout=60,
        )
        assert added.status_code < 300, added.text
        view = _health(url, KEY)
    assert view["status"] == "healthy" and view["embedder"]["status"] == "ok", view
