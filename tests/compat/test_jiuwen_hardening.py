"""JiuwenMemory routes under hostile values (issue 36, finding 7)."""

from __future__ import annotations

import httpx
import pytest

TENANT = {"user_id": "u", "scope_id": "s"}


@pytest.mark.parametrize("path", ["/get_user_mem_by_page/", "/get_user_mem_by_page_with_total/"])
@pytest.mark.parametrize("kind", ["记忆", "mémoire", "line\r\nX-Injected: 1", "emoji 🧠"])
def test_an_unknown_memory_type_of_any_script_is_no_500(
    http: httpx.Client, path: str, kind: str
) -> None:
    body = {**TENANT, "memory_type": kind, "page_idx": 1, "page_size": 10}
    response = http.post(path, json=body)
    assert response.status_code == 200, response.text
    warning = response.headers["X-Omoide-Warning"]
    assert "not a JiuwenMemory type" in warning and "\n" not in warning
    assert "X-Injected" not in response.headers
