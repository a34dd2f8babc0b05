"""Tenant ids with control characters are refused (issue 36, finding 11): the stores key a
tenant by ``user_id + "\\x1f" + scope_id``, so ("a\\x1fb", "c") and ("a", "b\\x1fc") would share
ranking statistics. Every door refuses them with a 422 naming the field; nothing is stored."""

from __future__ import annotations

from typing import Any

import pytest

from omoide import Memory
from omoide.errors import InvalidInput
from tests.api.conftest import Running
from tests.mcp.conftest import error, http_client, run

BAD = ["a\x1fb", "tab\there", "nl\n", "del\x7f", "c1\x85"]


@pytest.mark.parametrize("bad", BAD)
def test_http_refuses_control_characters_in_tenant_ids(server: Running, bad: str) -> None:
    with server.http() as http:
        for field in ("user_id", "scope_id"):
            added = http.post("/v1/memories", json={"text": "x", field: bad})
            assert added.status_code == 422, added.text
            assert field in added.json()["detail"]
            listed = http.get("/v1/memories", params={field: bad})
            assert listed.status_code == 422
            jiuwen = http.post("/add_messages/", json={"messages": [], field: bad})
            assert jiuwen.status_code == 422
    assert server.engine.get_all(user_id="a", scope_id="b\x1fc").total == 0


def test_two_tenants_cannot_share_a_key_through_the_library(memory: Memory) -> None:
    with pytest.raises(InvalidInput, match="user_id"):
        memory.add("first", user_id="a\x1fb", scope_id="c", infer=False)
    with pytest.raises(InvalidInput, match="scope_id"):
        memory.add("second", user_id="a", scope_id="b\x1fc", infer=False)


def test_mcp_refuses_control_characters_in_tenant_ids(server: Running) -> None:
    async def script() -> Any:
        async with http_client(server.url) as client:
            arguments = {"messages": [{"role": "user", "content": "x"}], "user_id": "a\x1fb"}
            return await client.call_tool("add_messages", arguments | {"infer": False})

    assert "control characters" in error(run(script))
