"""Streamable HTTP at ``/mcp`` inside the API app, behind the API's own middlewares.

The route sits in the FastAPI router (not a mounted sub-app), so every MCP request passes the
same request-id, authentication and body guards as the REST routes; the tool calls then read
the engine and the key's tenant from the request they arrived in. Stateless with JSON replies:
each POST is answered on its own, so there are no server-side sessions to own or expire.
"""

from __future__ import annotations

import json
from contextlib import AbstractAsyncContextManager
from typing import Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST
from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.routing import BaseRoute
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from omoide.api.auth import route_path
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


class JsonRpcErrors:
    """What the API's own guards answer at ``/mcp`` (401 without a valid key, 413 a body over
    the limit, 422 a NUL or a NaN in the arguments) in JSON-RPC's error shape, carrying their
    message. An MCP client reads a JSON-RPC error from a refused POST and shows its message;
    omoide's REST error body it could not read, so it showed only "Server returned an error
    response". The status and headers stay (a 401 keeps ``WWW-Authenticate``); a body that is
    not omoide's error (the SDK's own JSON-RPC errors) passes unchanged."""

    def __init__(self, app: ASGIApp, path: str = PATH) -> None:
        self.app = app
        self.path = path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or route_path(scope).rstrip("/") != self.path:
            await self.app(scope, receive, send)
            return
        start: Message | None = None
        chunks: list[bytes] = []

        async def relay(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start" and message["status"] >= 400:
                start = message  # held until the body is whole
                return
            if start is None or message["type"] != "http.response.body":
                await send(message)
                return
            chunks.append(message.get("body", b""))
            if message.get("more_body", False):
                return
            body = as_jsonrpc_error(start["status"], b"".join(chunks))
            headers = MutableHeaders(raw=list(start.get("headers", [])))
            headers["content-length"] = str(len(body))
            await send({**start, "headers": headers.raw})
            await send({"type": "http.response.body", "body": body})

        await self.app(scope, receive, relay)


def as_jsonrpc_error(status: int, body: bytes) -> bytes:
    """omoide's error body (``{"error": {"code", "message"}, "request_id"}``) as a JSON-RPC
    error with ``"id": null`` (the request's id is unknown when the body was never read); any
    other body unchanged.

    >>> too_big = b'{"error": {"code": "payload_too_large", "message": "too big"}}'
    >>> reply = json.loads(as_jsonrpc_error(413, too_big))
    >>> reply["id"], reply["error"]["code"], reply["error"]["message"]
    (None, -32600, 'too big')
    >>> already = b'{"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "x"}}'
    >>> as_jsonrpc_error(400, already) == already
    True
    """
    try:
        parsed = json.loads(body)
    except ValueError:
        return body
    error = parsed.get("error") if isinstance(parsed, dict) else None
    if not isinstance(error, dict) or not isinstance(error.get("code"), str):
        return body
    code = INVALID_PARAMS if status == 422 else INVALID_REQUEST
    if status >= 500:
        code = INTERNAL_ERROR
    data = {"status": status, "code": error["code"], "request_id": parsed.get("request_id")}
    message = str(error.get("message") or "")
    reply = {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": code, "message": message, "data": data},
    }
    return json.dumps(reply).encode()
