"""Streamable HTTP at ``/mcp`` inside the API app, behind the API's own middlewares.

The route sits in the FastAPI router (not a mounted sub-app), so every MCP request passes the
same request-id, authentication and body guards as the REST routes; the tool calls then read
the engine and the key's tenant from the request they arrived in. Stateless with JSON replies:
each POST is answered on its own, so there are no server-side sessions to own or expire.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.routing import BaseRoute

from omoide.api.deps import Tenancy
from omoide.config import Settings
from omoide.mcp import BuildServer
from omoide.memory import Memory

PATH = "/mcp"


class HttpMount:
    """``routes`` go into the app's router; ``run()`` wraps the app's lifespan."""

    def __init__(self, settings: Settings, build: BuildServer) -> None:
        def who(ctx: Context[Any, Any]) -> tuple[Memory, Tenancy]:
            request = ctx.request_context.request
            if not isinstance(request, Request):  # the SDK attaches the HTTP request it served
                raise ToolError("no HTTP request behind this tool call")
            return request.app.state.memory, Tenancy(getattr(request.state, "tenant", None))

        self.server = build(who, settings, settings.server.log_level)
        app = self.server.streamable_http_app(
            streamable_http_path=PATH,
            stateless_http=True,
            json_response=True,
            max_request_body_size=settings.server.max_body_bytes,
            transport_security=_guard(settings),
            host=settings.server.host,
        )
        self.routes: list[BaseRoute] = list(app.routes)

    def run(self) -> AbstractAsyncContextManager[None]:
        return self.server.session_manager.run()


def _guard(settings: Settings) -> TransportSecuritySettings | None:
    """Without a key, on loopback, the SDK's DNS-rebinding guard (``None``: only loopback
    ``Host`` and ``Origin`` headers), since a page a browser opens could otherwise reach the
    tools through a rebound name. With a key that page has no key to send, so any ``Host`` is
    accepted and a reverse proxy in front works."""
    if settings.server.api_key or settings.server.tenant_keys:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    return None
