"""No secret leaves through a status or an error: an LLM URL with ``user:password@`` and an
``?api_key=`` query, unreachable, as ``/health`` (every kind of caller), MCP ``health_check``
and ``omoide doctor`` report it (issue 36, finding 2)."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from omoide import Memory
from omoide.cli import app, state
from omoide.embed.protocol import Embedder
from tests.api.conftest import KEY, Running, make_settings, running
from tests.mcp.conftest import data, http_client, run

SECRETS = ("hunter2", "sk-leakme123456", "topsecretquery")
TENANT_KEYS = {"alice-key": {"user_id": "alice"}}


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def secret_url() -> str:
    port = _closed_port()
    return f"http://admin:hunter2@127.0.0.1:{port}/v1?api_key=sk-leakme123456&t=topsecretquery"


@pytest.fixture
def server(tmp_path: Path, embedder: Embedder, secret_url: str) -> Any:
    settings = make_settings(llm_base_url=secret_url, llm_model="m", llm_timeout=2.0)
    engine = Memory(tmp_path / "s.db", embedder=embedder, settings=settings, workers=0)
    with running(
        tmp_path / "s.db", embedder, engine=engine, api_key=KEY, tenant_keys=TENANT_KEYS
    ) as live:
        yield live


def _clean(text: str) -> None:
    assert not [s for s in SECRETS if s in text], text


@pytest.mark.parametrize("key", [KEY, "alice-key", None])
def test_health_shows_no_secret_of_the_llm_url(server: Running, key: str | None) -> None:
    with server.http(key) as http:
        body = http.get("/health").json()
    assert body["llm"]["status"] == "down"
    _clean(json.dumps(body))


@pytest.mark.parametrize("key", [KEY, "alice-key"])
def test_mcp_health_check_shows_no_secret(server: Running, key: str) -> None:
    async def script() -> Any:
        async with http_client(server.url, key) as client:
            return data(await client.call_tool("health_check", {}))

    body = run(script)
    assert body["llm"]["status"] == "down"
    _clean(json.dumps(body))


def test_doctor_shows_no_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, secret_url: str
) -> None:
    monkeypatch.setenv("OMOIDE_EMBEDDER", "hash")
    monkeypatch.setenv("OMOIDE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("OMOIDE_LLM_MODEL", "m")
    monkeypatch.setenv("OMOIDE_LLM_BASE_URL", secret_url)
    monkeypatch.chdir(tmp_path)
    state.settings, state.db = None, None
    try:
        for args in (["doctor", "--json"], ["doctor"]):
            result = CliRunner().invoke(app, args)
            assert "127.0.0.1" in result.stdout + result.stderr
            _clean(result.stdout + result.stderr)
    finally:
        state.settings, state.db = None, None


# urlsplit cannot read an unclosed IPv6 bracket: the password's masking itself raised, so every
# command (and `omoide serve`) ended in a traceback quoting the driver's error, URL and all.
UNREADABLE_DB_URL = "postgresql://admin:hunter2@[::1/db"


@pytest.mark.parametrize("args", [["list"], ["doctor"], ["doctor", "--json"]])
def test_an_unreadable_database_url_is_an_error_without_its_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    monkeypatch.setenv("OMOIDE_EMBEDDER", "hash")
    monkeypatch.setenv("OMOIDE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("OMOIDE_DB_URL", UNREADABLE_DB_URL)
    monkeypatch.chdir(tmp_path)
    state.settings, state.db = None, None
    try:
        result = CliRunner().invoke(app, args)
    finally:
        state.settings, state.db = None, None
    said = result.stdout + result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit), said
    assert "::1" in said
    _clean(said + repr(result.exception))
