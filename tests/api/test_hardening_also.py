"""Issue 36's smaller items ("Also:"), each through a public interface."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from omoide.cli import app, state
from tests.api.conftest import Running
from tests.mcp.conftest import error, http_client, run


@pytest.mark.parametrize(
    "message",
    [{"role": "user", "content": {"a": 1}}, {"role": "user", "content": 42}, {"role": 7}],
)
def test_mcp_refuses_a_message_that_is_not_text(server: Running, message: Any) -> None:
    """A non-string content was stored as its Python repr ("{'a': 1}")."""
    message = {"content": "fine", **message}

    async def script() -> Any:
        async with http_client(server.url) as client:
            arguments = {"messages": [message], "infer": False, "user_id": "mcp-user"}
            return await client.call_tool("add_messages", arguments)

    assert "must be a string" in error(run(script))
    assert server.engine.get_all(user_id="mcp-user").total == 0


def test_a_key_both_full_and_tenant_bound_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It silently got full access; now the settings are refused, without echoing the key."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("OMOIDE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("OMOIDE_EMBEDDER", "hash")
    monkeypatch.setenv("OMOIDE_API_KEY", "the-shared-secret-key")
    monkeypatch.setenv("OMOIDE_TENANT_KEYS", '{"the-shared-secret-key": {"user_id": "alice"}}')
    monkeypatch.chdir(tmp_path)
    state.settings, state.db = None, None
    try:
        result = CliRunner().invoke(app, ["doctor", "--json"])
    finally:
        state.settings, state.db = None, None
    said = result.stdout + result.stderr
    assert result.exit_code != 0 and "OMOIDE_TENANT_KEYS" in said and "full access" in said
    assert "the-shared-secret-key" not in said
