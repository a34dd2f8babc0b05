"""/docs and /redoc work offline, OpenAPI has short names and the bearer scheme, CORS."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from omoide.config import load_settings
from tests.api.conftest import KEY, Running

REFERENCE = re.compile(r"""(?:src|href|spec-url)\s*=\s*["']([^"']+)["']|url:\s*'([^']+)'""")
MEDIA = {".js": "javascript", ".css": "text/css", ".png": "image/png", ".json": "json"}


@pytest.fixture
def keyed(start_server: Callable[..., Running]) -> Running:
    return start_server(api_key=KEY, cors_origins="http://ui.example, http://localhost:5173/")


def _references(page: str) -> list[str]:
    return [a or b for a, b in REFERENCE.findall(page)]


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_docs_pages_load_every_asset_from_omoide_itself(keyed: Running, page: str) -> None:
    with httpx.Client(base_url=keyed.url, timeout=60) as browser:  # no key, like a browser
        html = browser.get(page)
        assert html.status_code == 200 and html.headers["content-type"].startswith("text/html")
        assert not re.findall(r"https?://", html.text), "the page names an outside URL"
        references = _references(html.text)
        assert "/openapi.json" in references and len(references) >= 3
        for url in references:
            assert url.startswith("/"), url
            asset = browser.get(url)
            assert asset.status_code == 200, url
            suffix = "." + url.rsplit(".", 1)[-1]
            assert MEDIA[suffix] in asset.headers["content-type"], url
            assert len(asset.content) > 100, url


def test_openapi_declares_bearer_auth_except_on_the_open_routes(keyed: Running) -> None:
    with keyed.http() as http:
        spec = http.get("/openapi.json").json()
    assert spec["components"]["securitySchemes"]["bearer"] == {
        "type": "http",
        "scheme": "bearer",
        "description": spec["components"]["securitySchemes"]["bearer"]["description"],
    }
    assert spec["security"] == [{"bearer": []}]
    assert spec["paths"]["/"]["get"]["security"] == []
    assert spec["paths"]["/health"]["get"]["security"] == []
    assert "security" not in spec["paths"]["/v1/memories"]["post"]  # the global one applies


def test_schema_names_have_no_module_paths_and_every_ref_resolves(keyed: Running) -> None:
    with keyed.http() as http:
        spec = http.get("/openapi.json").json()
    names = set(spec["components"]["schemas"])
    assert not [n for n in names if "__" in n or "omoide" in n]
    assert {"Added", "JiuwenAdded", "JiuwenSearchRequest", "WilmerSearchRequest"} <= names
    refs = set(re.findall(r'"#/components/schemas/([^"]+)"', httpx.Response(200, json=spec).text))
    assert refs and refs <= names


def _cors(server: Running, origin: str, headers: dict[str, Any] | None = None) -> httpx.Response:
    preflight = {
        "Origin": origin,
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type",
    }
    with httpx.Client(base_url=server.url, timeout=60) as http:
        return http.options("/v1/memories/search", headers=headers or preflight)


def test_cors_allows_only_the_configured_origins(keyed: Running) -> None:
    allowed = _cors(keyed, "http://localhost:5173")
    assert allowed.status_code == 200  # answered before authentication, which it cannot pass
    assert allowed.headers["access-control-allow-origin"] == "http://localhost:5173"
    assert "authorization" in allowed.headers["access-control-allow-headers"].lower()
    assert "access-control-allow-origin" not in _cors(keyed, "http://evil.example").headers
    with keyed.http(KEY) as http:
        real = http.post(
            "/v1/memories/search", json={"query": "tea"}, headers={"Origin": "http://ui.example"}
        )
    assert real.status_code == 200
    assert real.headers["access-control-allow-origin"] == "http://ui.example"
    assert "x-request-id" in real.headers["access-control-expose-headers"].lower()


def test_cors_is_off_by_default(server: Running) -> None:
    response = _cors(server, "http://localhost:5173")
    assert "access-control-allow-origin" not in response.headers
    with server.http() as http:
        real = http.get("/health", headers={"Origin": "http://localhost:5173"})
    assert "access-control-allow-origin" not in real.headers


def test_cors_origins_and_metrics_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OMOIDE_CORS_ORIGINS", " http://localhost:5173/ ,https://app.example")
    monkeypatch.setenv("OMOIDE_METRICS", "true")
    settings = load_settings(home=tmp_path)
    assert settings.server.cors_origins == ["http://localhost:5173", "https://app.example"]
    assert settings.server.metrics is True


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_docs_pages_keep_no_key_and_cannot_be_framed(keyed: Running, page: str) -> None:
    """Issue 36, finding 8: the key Swagger UI is given is not persisted to localStorage, and
    the pages send a CSP that allows only their own scripts and no framing."""
    import base64
    import hashlib

    with httpx.Client(base_url=keyed.url, timeout=60) as browser:
        html = browser.get(page)
    assert '"persistAuthorization": true' not in html.text.replace("'", '"')
    assert "localStorage" not in html.text
    policy = html.headers["Content-Security-Policy"]
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
    assert directives["frame-ancestors"] == "'none'" and html.headers["X-Frame-Options"] == "DENY"
    assert "'unsafe-inline'" not in directives["script-src"]
    assert "'unsafe-eval'" not in directives["script-src"]
    for script in re.findall(r"<script>(.*?)</script>", html.text, re.DOTALL):
        digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
        assert f"'sha256-{digest}'" in directives["script-src"]  # the page's own still runs
