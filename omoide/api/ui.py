"""``GET /ui/``: the memory browser, a static page (HTML, a JS module with the graph drawing it
imports, CSS) served from the package, so it works offline. It calls the ``/v1`` API from the
browser with the key the user types in; the page and its assets hold no data, so they are open
without a key (``omoide.api.auth.OPEN_PREFIXES``).
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse, RedirectResponse

from omoide.errors import NotFound

STATIC = Path(__file__).with_name("ui_static")
# A fixed set: a request can only ever name one of these files, never a path to walk.
ASSETS = {
    "app.js": "text/javascript",
    "graph.js": "text/javascript",
    "app.css": "text/css",
    "favicon.svg": "image/svg+xml",
}
# The page reads nothing from the server but /v1 JSON; no inline script or style runs.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
# X-Frame-Options as on the docs pages (omoide.api.docs): browsers without frame-ancestors also
# refuse to frame the page (its Delete buttons); nosniff: an asset runs only as its own type.
HEADERS = {
    "Content-Security-Policy": CSP,
    "Cache-Control": "no-cache",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
}

router = APIRouter(include_in_schema=False)


@router.get("/ui")
def ui_redirect() -> RedirectResponse:
    """``/ui`` -> ``/ui/``, so the page's relative asset URLs resolve under ``/ui/``."""
    return RedirectResponse("/ui/", status_code=308)


@router.get("/ui/")
def ui_page() -> FileResponse:
    return FileResponse(STATIC / "index.html", media_type="text/html", headers=HEADERS)


@router.get("/ui/{name}")
def ui_asset(name: str) -> FileResponse:
    media_type = ASSETS.get(name)
    if media_type is None:
        raise NotFound(f"no UI asset {name!r}")
    return FileResponse(STATIC / name, media_type=media_type, headers=HEADERS)
