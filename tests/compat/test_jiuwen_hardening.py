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


@pytest.mark.parametrize("kind", ["x" * 50_000, "记" * 8_000])
def test_a_long_unknown_memory_type_keeps_the_headers_small(http: httpx.Client, kind: str) -> None:
    """The warning header quotes a bounded prefix: the whole value (up to the body limit, six
    bytes a character once escaped) made headers no client or proxy reads (httpx: 'Receive
    buffer too long'; nginx: 502)."""
    body = {**TENANT, "memory_type": kind, "page_idx": 1, "page_size": 10}
    response = http.post("/get_user_mem_by_page/", json=body)
    assert response.status_code == 200, response.text[:200]
    warning = response.headers["X-Omoide-Warning"]
    assert "not a JiuwenMemory type" in warning and len(warning) < 400
