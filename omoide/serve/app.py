"""``create_app(settings, memory=None)``: the FastAPI application.

    >>> from omoide.config import load_settings
    >>> app = create_app(load_settings())          # builds Memory(settings=...) at startup
    >>> app = create_app(settings, memory=memory)  # or serves a memory you own and close

Routes are sync ``def`` functions: FastAPI runs them in its thread pool, so a slow embed or a
long job never stops the server from answering. Middlewares, outermost first: request id and
the 500 handler, request metrics (``OMOIDE_METRICS``), CORS (``OMOIDE_CORS_ORIGINS``; answers
preflights before authentication, which they cannot pass), authentication, response cap
(``OMOIDE_MAX_RESPONSE_BYTES``), body guard (size,
media type, every string of the request), Host check (DNS rebinding; keyless loopback servers)
and Origin check (cross-site writes; keyless servers).

Besides the REST routes: MCP over streamable HTTP at ``/mcp`` (``omoide.mcp.http``), Prometheus
metrics at ``/metrics`` when enabled (``omoide.api.metrics``), and ``/docs`` and ``/redoc`` with
their assets served locally (``omoide.api.docs``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio.to_thread
from fastapi import FastAPI
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware

from omoide.api import docs, errors, openapi
from omoide.api.auth import AuthMiddleware
from omoide.api.metrics import CallMetrics, Metrics, RequestMetrics
from omoide.api.metrics import install as install_metrics
from omoide.api.middleware import BodyGuard, HostGuard, RequestContext, ResponseCap
from omoide.api.system import router as system_router
from omoide.api.ui import router as ui_router
from omoide.api.v1 import explore, jobs, knowledge, memories, sessions
from omoide.compat.jiuwen import routes as jiuwen
from omoide.compat.nexus import routes as nexus
from omoide.compat.wilmer import routes as wilmer
from omoide.config import Settings
from omoide.mcp.http import HttpMount, JsonRpcErrors
from omoide.memory import Memory
from omoide.observe import NO_OBSERVER
from omoide.serve.tools import mcp_tools

DESCRIPTION = """Long-term memory for LLM applications and agents.

Every `/v1` route works inside one tenant, named by `user_id` and `scope_id` (both default to
`"default"`; in the body for POST and PATCH, in the query string otherwise). With an API key
configured, send `Authorization: Bearer <key>` on every route except `GET /` and `GET /health`.
Errors share one shape: `{"detail", "error": {"code", "message"}, "request_id"}`.
"""

TAGS = [
    {"name": "memories", "description": "Add, search, read, update and delete memories."},
    {"name": "sessions", "description": "Conversations and their episodes."},
    {"name": "jobs", "description": "Durable background jobs."},
    {"name": "service", "description": "Health and discovery; open without a key."},
    {"name": "graph", "description": "The tenant's knowledge graph: entities and relations."},
    {"name": "summaries", "description": "Rolling session summaries and chunk memories."},
    {"name": "context", "description": "Token-budgeted context blocks and access tracking."},
    {"name": "consolidation", "description": "Merging low-value old episodes into summaries."},
    {"name": "jiuwen", "description": "JiuwenMemory's memory_server (docs/compat/jiuwen.md)."},
    {"name": "nexusAI", "description": "nexusAI's memory-service (docs/compat/nexus.md)."},
    {"name": "wilmer", "description": "WilmerAI's discussion memory (docs/compat/wilmer.md)."},
]


WELCOME = "omoide: long-term memory for LLM applications and agents"


def create_app(
    settings: Settings,
    memory: Memory | None = None,
    *,
    calls: CallMetrics | None = None,
    welcome: str = WELCOME,
) -> FastAPI:
    """The application. Without ``memory`` it opens ``Memory(settings=settings)`` at startup
    (starting its job workers) and closes it at shutdown; a given memory is left to its owner.
    ``calls``: the observer a given memory was built with, for its call metrics (without it,
    only a memory the app builds reports them). ``welcome``: the ``message`` of ``GET /``
    (``memory-server`` answers with JiuwenMemory's).
    """

    mcp = HttpMount(settings, mcp_tools)
    metrics = Metrics() if settings.server.metrics else None
    if metrics is not None and calls is None:
        calls = CallMetrics()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with mcp.run():
            if memory is not None:
                yield
                return
            app.state.memory = await anyio.to_thread.run_sync(
                lambda: Memory(settings=settings, observer=calls or NO_OBSERVER)
            )
            try:
                yield
            finally:
                # Workers finish the batch in hand; unfinished jobs stay queued in the database.
                await anyio.to_thread.run_sync(app.state.memory.close)

    from omoide._version import __version__

    app = FastAPI(
        title="omoide",
        version=__version__,
        description=DESCRIPTION,
        openapi_tags=TAGS,
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        middleware=_middleware(settings, metrics),
    )
    app.state.settings = settings
    app.state.memory = memory
    app.state.welcome = welcome
    errors.install(app)
    docs.install(app)
    openapi.install(app)
    if metrics is not None:
        install_metrics(app, metrics, calls or CallMetrics())
    app.router.routes.extend(mcp.routes)
    for router in (system_router, memories.router, sessions.router, jobs.router, knowledge.router):
        app.include_router(router)
    app.include_router(explore.router)
    app.include_router(ui_router)
    if settings.compat.jiuwen:
        app.include_router(jiuwen.router)
    if settings.compat.nexus:
        app.include_router(nexus.router)
    if settings.compat.wilmer:
        app.include_router(wilmer.router)
    return app


def _middleware(settings: Settings, metrics: Metrics | None) -> list[Middleware]:
    stack = [Middleware(RequestContext)]
    if metrics is not None:
        stack.append(Middleware(RequestMetrics, metrics=metrics))
    if settings.server.cors_origins:
        stack.append(
            Middleware(
                CORSMiddleware,
                allow_origins=settings.server.cors_origins,
                allow_methods=["*"],
                allow_headers=["Authorization", "Content-Type", "X-Request-ID"],
                expose_headers=["X-Request-ID"],
                max_age=600,
            )
        )
    stack.append(Middleware(JsonRpcErrors))  # the guards' refusals at /mcp, as MCP reads them
    stack.append(Middleware(AuthMiddleware, settings=settings))
    stack.append(Middleware(ResponseCap, max_bytes=settings.server.max_response_bytes))
    stack.append(
        Middleware(
            BodyGuard,
            max_bytes=settings.server.max_body_bytes,
            timeout=settings.server.body_timeout,
        )
    )
    stack.append(
        Middleware(
            HostGuard,
            allowed=settings.server.host_allowlist(),
            origins=settings.server.cors_origins,
            check_origin=not (settings.server.api_key or settings.server.tenant_keys),
        )
    )
    return stack
