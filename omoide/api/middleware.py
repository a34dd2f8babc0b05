"""Transport guards as pure ASGI middlewares: request ids, the 500 handler, body limits.

``RequestContext`` is the outermost: it gives each request an id (echoed as ``X-Request-ID``)
and turns any unexpected exception into a logged 500 whose body carries the id but never the
traceback. ``BodyGuard`` reads the body before the app does: it refuses a body over
``max_body_bytes`` (by ``Content-Length`` and by the bytes actually streamed), a body slower
than ``body_timeout`` (408: a trickled body would hold its connection), a body that is not
JSON by its ``Content-Type`` (which also stops browsers from posting "simple" cross-site
requests to a local server), and bytes that are not UTF-8. It also checks every string of the
request once, for every route of every interface: the path, each query parameter and every
key and value of a JSON body at any depth. A lone surrogate or a NUL (or an integer outside
SQLite's 64-bit range, a NaN, nesting deeper than 64 levels) is a 422 naming the field, before
any route runs, so nothing is stored (``omoide.validate.find_invalid``).
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from collections.abc import Sequence
from urllib.parse import parse_qsl, urlsplit

import anyio
from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from omoide.api.errors import error_response, request_id_of
from omoide.config import host_name
from omoide.validate import describe_location, find_invalid, string_problem

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
    def __init__(self, app: ASGIApp, max_bytes: int, timeout: float | None = None) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.timeout = timeout  # seconds for the whole body: a trickled body holds a connection

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        problem = self._check_length(headers.get("content-length"))
        body = b""
        headers_out = None
        if problem is None:
            try:
                with anyio.fail_after(self.timeout):
                    body, complete = await self._read(receive)
            except TimeoutError:
                message = f"the request body did not arrive within {self.timeout:g} s"
                problem = 408, "request_timeout", message + " (OMOIDE_BODY_TIMEOUT)"
                headers_out = {"Connection": "close"}
            else:
                problem = self._check_body(headers.get("content-type"), body, complete)
        if problem is None:
            problem = check_strings(scope, body)
        if problem is not None:
            status, code, message = problem
            rid = request_id_of(scope.get("state"))
            response = error_response(status, code, message, rid, headers=headers_out)
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


def _invalid(where: str, problem: str) -> tuple[int, str, str]:
    return 422, "invalid_input", f"{where}: {problem}"


def check_strings(scope: Scope, body: bytes) -> tuple[int, str, str] | None:
    """The first string, number or nesting of the request that cannot be stored, as a 422.

    Query strings and paths arrive percent-decoded with invalid UTF-8 replaced, so only NUL
    can hide there; a JSON body can carry lone surrogates through ``\\u`` escapes.
    """
    problem = string_problem(scope["path"])
    if problem is not None:
        return _invalid("path", problem)
    query = scope.get("query_string", b"").decode("latin-1")
    for name, value in parse_qsl(query, keep_blank_values=True):
        problem = string_problem(name)
        if problem is not None:
            return _invalid("query", f"a parameter name {problem}")
        problem = string_problem(value)
        if problem is not None:
            return _invalid(f"query.{name}", problem)
    if not body:
        return None
    try:
        value = json.loads(body)
    except RecursionError:
        return _invalid("body", "nested too deeply")
    except ValueError:
        return None  # not JSON: the route's own parsing names the syntax error
    found = find_invalid(value)
    if found is None:
        return None
    where, problem = found
    return _invalid(describe_location("body", where), problem)


class HostGuard:
    """Answers only requests whose ``Host`` is on the allowed list (400 otherwise), and on a
    keyless server refuses a write whose ``Origin`` is another site's (403).

    It runs after authentication and the body checks: what they answer before it (401, 413,
    415, 422) reveals nothing to a page that rebinds its name to this server. A request without
    ``Host`` (HTTP/1.0) is answered: browsers always send one.

    The ``Origin`` check: a JSON body needs a preflight no other site passes, but a POST with no
    body (``/v1/jobs/{id}/retry``) is a "simple" request any page can send a keyless server.
    Browsers name the page's site in ``Origin`` on every POST, PUT, PATCH and DELETE; one whose
    host is neither the request's ``Host`` nor an allowed host, and that is not an
    ``OMOIDE_CORS_ORIGINS`` entry, is refused. A keyed server needs no such check: a page
    cannot send its key.
    """

    def __init__(
        self,
        app: ASGIApp,
        allowed: frozenset[str] | None,
        origins: Sequence[str] = (),
        check_origin: bool = False,
    ) -> None:
        self.app = app
        self.allowed = allowed
        self.origins = {o.rstrip("/").lower() for o in origins}
        self.check_origin = check_origin

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        header = headers.get("host")
        if self.allowed is not None and header is not None and not self._allowed(header):
            message = (
                f"Host {header[:100]!r} is not one this server answers; allowed: "
                f"{', '.join(sorted(self.allowed))} (any port). Set OMOIDE_ALLOWED_HOSTS to the "
                "names clients use"
            )
            rid = request_id_of(scope.get("state"))
            await error_response(400, "bad_host", message, rid)(scope, receive, send)
            return
        origin = headers.get("origin")
        if (
            self.check_origin
            and origin is not None
            and scope["method"] not in SAFE
            and not self._ours(origin, header)
        ):
            message = (
                f"a page at {origin[:100]!r} may not write here: only pages of this server's "
                "host names (any port) and of OMOIDE_CORS_ORIGINS may"
            )
            rid = request_id_of(scope.get("state"))
            await error_response(403, "cross_site", message, rid)(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _allowed(self, header: str) -> bool:
        return self.allowed is None or host_name(header) in self.allowed

    def _ours(self, origin: str, host: str | None) -> bool:
        value = origin.strip().rstrip("/").lower()
        if "*" in self.origins or value in self.origins:
            return True
        try:
            parts = urlsplit(value)
            name = parts.hostname
        except ValueError:
            return False
        if parts.scheme not in ("http", "https") or name is None:
            return False
        same_host = host is not None and host_name(host) == name
        return same_host or (self.allowed is not None and name in self.allowed)


SAFE = frozenset({"GET", "HEAD", "OPTIONS"})


class ResponseCap:
    """Refuses to send a whole-body response larger than ``max_bytes`` (a page of large
    memories, ``limit=10000``): the caller gets 413 naming the limit and asks for a smaller
    page. Streamed responses (CSV and JSONL exports) go through, a chunk at a time. An event
    stream (``text/event-stream``, MCP's ``GET /mcp``) is sent at once: its first event may
    never come, and a client waits for the headers to know the stream is open."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start: Message | None = None

        async def capped(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                if _is_event_stream(message):
                    await send(message)  # events come when they come: never hold the headers
                    return
                start = message  # held until the first body part shows the size
                return
            if start is not None:
                held, start = start, None
                body = message.get("body", b"")
                if not message.get("more_body", False) and len(body) > self.max_bytes:
                    await self._refuse(scope, receive, send, len(body))
                    return
                await send(held)
            await send(message)

        await self.app(scope, receive, capped)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, size: int) -> None:
        message = (
            f"the response would be {size} bytes; the limit is {self.max_bytes}"
            " (OMOIDE_MAX_RESPONSE_BYTES): ask for a smaller page (limit, page_size)"
        )
        rid = request_id_of(scope.get("state"))
        response = error_response(413, "response_too_large", message, rid)
        await response(scope, receive, send)


def _is_event_stream(start: Message) -> bool:
    content_type = Headers(raw=start.get("headers", [])).get("content-type", "")
    return content_type.split(";")[0].strip().lower() == "text/event-stream"
