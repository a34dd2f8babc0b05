"""API-key authentication as a pure ASGI middleware, so it runs before any body is parsed.

With a key configured (``MEMORY_API_KEY`` / ``OMOIDE_API_KEY``, or tenant-bound keys in
``OMOIDE_TENANT_KEYS``) every request except ``GET /``, ``GET /health``, the API docs and the
web UI's page and assets (``GET /ui/...``) needs ``Authorization: Bearer <key>``; otherwise it
gets 401 ``Unauthorized: invalid or missing API key``. Keys are compared with
``hmac.compare_digest`` against every configured key, so the time taken does not reveal which
key, or how much of one, matched.

The middleware records who called in the request state: ``tenant`` is the ``TenantKey`` a bound
key is limited to (``None`` for the full-access key), ``authenticated`` whether a key matched.
"""

from __future__ import annotations

import hmac

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from omoide.api.docs import OPEN_PATHS as DOCS
from omoide.api.errors import UNAUTHORIZED, error_response, request_id_of
from omoide.config import Settings, TenantKey
from omoide.memory import WAITER

# The docs pages, their assets and the OpenAPI document are open so a browser can load them
# and "Authorize" there (omoide.api.docs).
OPEN_ROUTES = frozenset({("GET", "/"), ("GET", "/health")} | {("GET", path) for path in DOCS})
# The web UI's page and assets (omoide.api.ui) hold no data: the browser must load them to ask
# for the key that its /v1 calls then send.
OPEN_PREFIXES = ("/ui",)


class Keys:
    """The configured keys; ``match`` returns the caller's binding or ``False``."""

    def __init__(self, settings: Settings) -> None:
        self._full = (
            [settings.server.api_key.get_secret_value().encode()] if settings.server.api_key else []
        )
        self._bound = [(k.encode(), t) for k, t in settings.server.tenant_keys.items()]

    @property
    def enabled(self) -> bool:
        return bool(self._full or self._bound)

    def match(self, authorization: str | None) -> TenantKey | bool | None:
        """``None`` for the full-access key, the ``TenantKey`` for a bound key, else ``False``."""
        token = _bearer(authorization)
        if token is None:
            return False
        found: TenantKey | bool | None = False
        # Compare against every key (no early exit), so timing says nothing about the match.
        for key, tenant in self._bound:
            if hmac.compare_digest(token, key) and found is False:
                found = tenant
        for key in self._full:
            if hmac.compare_digest(token, key):
                found = None
        return found


def _bearer(authorization: str | None) -> bytes | None:
    if not authorization:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip().encode("utf-8", "surrogateescape")


def route_path(scope: Scope) -> str:
    """The request's path inside the app, without the ``root_path`` a proxy mounts it under."""
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    if root and path.startswith(root):
        path = path[len(root) :] or "/"
    return path


def _is_open(method: str, path: str) -> bool:
    if (method, path) in OPEN_ROUTES:
        return True
    return method == "GET" and any(path == p or path.startswith(p + "/") for p in OPEN_PREFIXES)


class AuthMiddleware:
    """Rejects unauthenticated requests with 401 before routing or body parsing."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.keys = Keys(settings)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        state = scope.setdefault("state", {})
        state["tenant"] = None
        state["authenticated"] = not self.keys.enabled
        if self.keys.enabled:
            found = self.keys.match(Headers(scope=scope).get("authorization"))
            if found is not False:
                state["tenant"], state["authenticated"] = found, True
            elif not _is_open(scope["method"], route_path(scope)):
                headers = {"WWW-Authenticate": "Bearer"}
                response = error_response(
                    401, "unauthorized", UNAUTHORIZED, request_id_of(state), headers=headers
                )
                await response(scope, receive, send)
                return
        tenant = state["tenant"]
        if tenant is None or tenant.scope_id is not None:  # one tenant, or the full key
            await self.app(scope, receive, send)
            return
        # A key bound to a user reaches each of its scopes: its requests that wait for jobs
        # count as one tenant's (OMOIDE_MAX_WAITING_PER_TENANT), not one per scope.
        token = WAITER.set(f"user {tenant.user_id}")
        try:
            await self.app(scope, receive, send)
        finally:
            WAITER.reset(token)
