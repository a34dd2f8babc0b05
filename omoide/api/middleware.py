"""Transport guards as pure ASGI middlewares: request ids, the 500 handler, body limits.

``RequestContext`` is the outermost: it gives each request an id (echoed as ``X-Request-ID``)
and turns any unexpected exception into a logged 500 whose body carries the id but never the
traceback. ``BodyGuard`` reads the body before the app does: it refuses a body over
``max_body_bytes`` (by ``Content-Length`` and by the bytes actually streamed), a body that is
not JSON by its ``Content-Type`` (which also stops browsers from posting "simple" cross-site
requests to a local server), and bytes that are not UTF-8.
"""

from __future__ import annotations

import logging
import re
import uuid

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from omoide.api.errors import error_response, request_id_of

log = logging.getLogger("omoide.api")

_CLIENT_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


class RequestContext:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = Headers(scope=scope).get("x-request-id", "")
        request_id = given if _CLIENT_ID.match(given) else uuid.uuid4().hex
        scope.setdefault("state", {})["request_id"] = request_id
        started = False

        async def send_with_id(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                MutableHeaders(scope=message)["X-Request-ID"] = request_id
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except Exception:
            log.exception("request %s failed: %s %s", request_id, scope["method"], scope["path"])
            if started:
                raise
            message = f"internal server error (request id {request_id}; details in the server log)"
            response = error_response(500, "internal_error", message, request_id)
            await response(scope, receive, send_with_id)


class BodyGuard:
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        problem = self._check_length(headers.get("content-length"))
        body = b""
        if problem is None:
            body, complete = await self._read(receive)
            problem = self._check_body(headers.get("content-type"), body, complete)
        if problem is not None:
            status, code, message = problem
            response = error_response(status, code, message, request_id_of(scope.get("state")))
            await response(scope, receive, send)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)

    def _too_large(self) -> tuple[int, str, str]:
        message = (
            f"request body is larger than the limit of {self.max_bytes} bytes"
            " (OMOIDE_MAX_BODY_BYTES)"
        )
        return 413, "payload_too_large", message

    def _check_length(self, value: str | None) -> tuple[int, str, str] | None:
        if value is None:
            return None
        if not value.strip().isdigit():
            return 400, "bad_request", f"invalid Content-Length header: {value!r}"
        return self._too_large() if int(value) > self.max_bytes else None

    async def _read(self, receive: Receive) -> tuple[bytes, bool]:
        """The whole body, or ``complete=False`` as soon as it passes the limit."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return b"".join(chunks), True  # client went away; the app sees it next
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                return b"", False
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks), True

    def _check_body(
        self, content_type: str | None, body: bytes, complete: bool
    ) -> tuple[int, str, str] | None:
        if not complete:
            return self._too_large()
        if not body:
            return None
        media = (content_type or "").split(";")[0].strip().lower()
        if media != "application/json" and not media.endswith("+json"):
            shown = f"Content-Type {media!r}" if media else "no Content-Type"
            message = f"the body must be JSON sent with Content-Type: application/json ({shown})"
            return 415, "unsupported_media_type", message
        try:
            body.decode("utf-8")
        except UnicodeDecodeError as exc:
            return 400, "bad_request", f"request body is not valid UTF-8 (byte {exc.start})"
        return None
