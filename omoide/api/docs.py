"""``/docs`` (Swagger UI) and ``/redoc`` served with their assets, so they work offline.

Swagger UI comes from the ``swagger-ui-bundle`` package, ReDoc from the copy vendored in
``static/redoc`` (see its README). The pages, their assets and ``/openapi.json`` are open without
a key (``OPEN_PATHS``): they describe the API and hold no data, and a browser cannot send a
bearer header to load them; "Authorize" in Swagger UI then sends the key on every call. The key
lives in the page only (no ``persistAuthorization``: it is not written to ``localStorage``,
where any script of the origin could read it later), and both pages carry a
Content-Security-Policy (their own scripts only, no framing: ``frame-ancestors 'none'``).
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Callable
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse
from swagger_ui_bundle import swagger_ui_path  # type: ignore[import-untyped]

SWAGGER = Path(str(swagger_ui_path))
REDOC = Path(__file__).parent / "static" / "redoc"
ASSETS: dict[str, tuple[Path, str]] = {
    "/docs/swagger-ui-bundle.js": (SWAGGER / "swagger-ui-bundle.js", "text/javascript"),
    "/docs/swagger-ui.css": (SWAGGER / "swagger-ui.css", "text/css"),
    "/docs/favicon.png": (SWAGGER / "favicon-32x32.png", "image/png"),
    "/docs/oauth2-redirect.html": (SWAGGER / "oauth2-redirect.html", "text/html"),
    "/docs/redoc.standalone.js": (REDOC / "redoc.standalone.js", "text/javascript"),
}
PAGES = ("/docs", "/redoc")
OPENAPI = "/openapi.json"
OPEN_PATHS = frozenset({*ASSETS, *PAGES, OPENAPI})
MAX_AGE = "public, max-age=86400"  # the assets change only with the package
_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.DOTALL)


def install(app: FastAPI) -> None:
    """Add the two pages and the asset routes; the app must be built with ``docs_url=None``
    and ``redoc_url=None``."""

    def root(request: Request) -> str:
        return str(request.scope.get("root_path", "")).rstrip("/")

    @app.get("/docs", include_in_schema=False)
    def swagger(request: Request) -> HTMLResponse:
        base = root(request)
        return _guarded(
            get_swagger_ui_html(
                openapi_url=base + OPENAPI,
                title=f"{app.title} - API docs",
                swagger_js_url=base + "/docs/swagger-ui-bundle.js",
                swagger_css_url=base + "/docs/swagger-ui.css",
                swagger_favicon_url=base + "/docs/favicon.png",
                oauth2_redirect_url=base + "/docs/oauth2-redirect.html",
                # no online validator: Swagger UI would send the spec to validator.swagger.io
                swagger_ui_parameters={"persistAuthorization": False, "validatorUrl": None},
            )
        )

    @app.get("/redoc", include_in_schema=False)
    def redoc(request: Request) -> HTMLResponse:
        base = root(request)
        return _guarded(
            get_redoc_html(
                openapi_url=base + OPENAPI,
                title=f"{app.title} - API reference",
                redoc_js_url=base + "/docs/redoc.standalone.js",
                redoc_favicon_url=base + "/docs/favicon.png",
                with_google_fonts=False,
            )
        )

    for path, (file, media_type) in ASSETS.items():
        app.add_api_route(path, _asset(file, media_type), methods=["GET"], include_in_schema=False)


def _guarded(page: HTMLResponse) -> HTMLResponse:
    """The page with a CSP allowing its own scripts (the inline one by its hash), inline
    styles, same-origin calls and ReDoc's blob workers, and nothing framing it."""
    html = bytes(page.body).decode("utf-8")
    hashes = " ".join(
        f"'sha256-{base64.b64encode(hashlib.sha256(s.encode()).digest()).decode()}'"
        for s in _INLINE_SCRIPT.findall(html)
    )
    policy = (
        f"default-src 'none'; script-src 'self' {hashes}; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; "
        "worker-src 'self' blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )
    page.headers["Content-Security-Policy"] = policy
    page.headers["X-Frame-Options"] = "DENY"
    return page


def _asset(file: Path, media_type: str) -> Callable[[], FileResponse]:
    def serve() -> FileResponse:
        return FileResponse(file, media_type=media_type, headers={"Cache-Control": MAX_AGE})

    return serve
