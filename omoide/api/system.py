"""``GET /`` and ``GET /health``: the two routes open without an API key."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse

from omoide.api.deps import MemoryDep, TenancyDep
from omoide.api.errors import UNAUTHORIZED
from omoide.api.health import health_view, statuses
from omoide.api.models import HealthQuery
from omoide.errors import Unauthorized

router = APIRouter(tags=["service"])


@router.get("/")
def root(request: Request) -> dict[str, Any]:
    """The service name, version and the list of endpoints, and where the docs and the web UI
    are.

    `message` and `endpoints` (`"METHOD /path"` strings) are also the fields of `memory-server`'s
    root, which its clients read; `routes` carries the same routes with their summaries.
    """
    from omoide._version import __version__

    routes = [
        {"method": method.upper(), "path": path, "summary": operation.get("summary", "")}
        for path, operations in request.app.openapi()["paths"].items()
        for method, operation in operations.items()
    ]
    return {
        "message": request.app.state.welcome,
        "endpoints": [f"{r['method']} {r['path']}" for r in routes],
        "name": "omoide",
        "version": __version__,
        "docs": "/docs",
        "ui": "/ui/",
        "mcp": "/mcp",
        "routes": routes,
    }


@router.get(
    "/health",
    responses={503: {"description": "The store is down."}},
    openapi_extra={
        "responses": {
            "200": {
                "content": {
                    "application/json": {
                        "example": {
                            "status": "healthy",
                            "message": "Memory Engine API is running",
                            "version": "0.1.0",
                            "store": {"status": "ok", "schema_version": 2},
                            "embedder": {"status": "ok", "name": "all-MiniLM-L6-v2"},
                            "llm": {"status": "disabled"},
                            "jobs": {"pending": 0, "running": 0, "done": 3, "failed": 0},
                        }
                    }
                }
            }
        }
    },
)
def health(
    request: Request,
    query: Annotated[HealthQuery, Query()],
    engine: MemoryDep,
    tenancy: TenancyDep,
) -> JSONResponse:
    """Status of the store, the embedder and the LLM: `ok`, `down` or `disabled`, with versions.

    `status` is `healthy`, or `degraded` when the embedder is
    down (search falls back to keywords) or is another model than the database's, when a
    markdown memory file (`INDEX_BACKEND=file`) holds blocks that could not be read
    (`files.problems`; they are kept in the file), or when memories have no vector yet
    (`vectors.without_vector`: vector search misses them); `down`
    with a 503 when the store is down or its file is corrupt (`store.integrity`). Without a
    valid key (when one is configured) only the statuses and the version are shown, and
    `probe=true` (which embeds a text on every call) is a 401. A tenant-bound key sees no
    database location, only its own tenant's job counts and no other tenant's detail.
    """
    authenticated = getattr(request.state, "authenticated", False)
    if query.probe and not authenticated:
        raise Unauthorized(UNAUTHORIZED)
    view = health_view(engine, tenancy, probe=query.probe)
    down = view["store"].get("status") == "down"
    if not authenticated:
        view = statuses(view)
    body = {"message": "Memory Engine API is running", **view}  # memory-server's clients read it
    return JSONResponse(body, status_code=503 if down else 200)
