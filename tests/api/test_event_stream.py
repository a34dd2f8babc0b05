"""The response cap and an event stream (MCP's ``GET /mcp``): the headers go out at once.

The cap held every response's headers until its first body part, to see the size. An event
stream's first event may come much later (an idle MCP stream sends only a keep-alive ping), so
its client waited that long for the ``text/event-stream`` headers the MCP spec says it gets.
Driven through the middleware itself, ordered by events, not by clocks: the app sends its
first event only once the client has received the headers."""

from __future__ import annotations

import anyio
from starlette.types import Message, Receive, Scope, Send

from omoide.api.middleware import ResponseCap

SCOPE: Scope = {"type": "http", "method": "GET", "path": "/mcp", "headers": [], "state": {}}


def _drive(content_type: bytes, body: bytes) -> list[Message]:
    """What reaches the client when an app answers ``content_type`` and sends ``body`` only
    after the client has the headers (or, if the cap holds them, never)."""
    sent: list[Message] = []
    headers_seen = anyio.Event()

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        start = {"type": "http.response.start", "status": 200}
        await send(start | {"headers": [(b"content-type", content_type)]})
        if content_type == b"text/event-stream":
            await headers_seen.wait()
        await send({"type": "http.response.body", "body": body, "more_body": False})

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        sent.append(message)
        if message["type"] == "http.response.start":
            headers_seen.set()

    async def main() -> None:
        with anyio.fail_after(30):  # a guard against a regression hanging the suite, no timing
            await ResponseCap(app, max_bytes=1024)(SCOPE, receive, send)

    anyio.run(main)
    return sent


def test_an_event_stream_gets_its_headers_before_its_first_event() -> None:
    sent = _drive(b"text/event-stream", b"data: ping\n\n")
    assert [m["type"] for m in sent] == ["http.response.start", "http.response.body"]
    assert sent[0]["status"] == 200


def test_a_whole_body_over_the_cap_is_still_refused() -> None:
    sent = _drive(b"application/json", b"x" * 2048)
    assert sent[0]["status"] == 413
    assert b"OMOIDE_MAX_RESPONSE_BYTES" in b"".join(m.get("body", b"") for m in sent[1:])
