"""How ``omoide serve`` runs uvicorn: slow-client timeouts, a connection cap, quiet access logs.

uvicorn closes an idle keep-alive connection after ``timeout_keep_alive`` but has no deadline
for the headers of a request: a client that sends one header byte every few seconds holds a
connection forever, and a few hundred of them exhaust the server (slowloris).
``HeaderTimeoutH11Protocol`` closes a connection whose request headers are not complete
``header_timeout`` seconds after the connection opened or after the previous response.
``limit_concurrency`` caps open connections and requests: beyond it uvicorn answers 503.

The access log of uvicorn prints the path with its query string, which carries search text and
ids (``GET /episodes/search?q=...``); ``QueryStringFilter`` cuts the query off.

Behind a reverse proxy (nginx, Caddy) let the proxy own client timeouts and TLS, keep omoide on
127.0.0.1 and set ``OMOIDE_ALLOWED_HOSTS`` to the public name the proxy forwards as ``Host``.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from omoide.config import Settings


class HeaderTimeoutH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline for each request's headers."""

    header_timeout: float = 10.0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._header_deadline: asyncio.TimerHandle | None = None
        super().connection_made(transport)
        self._arm_header_deadline()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:  # the headers are in: the route runs
            self._disarm_header_deadline()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self._arm_header_deadline()  # the next request's headers get the same deadline

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_header_deadline()
        super().connection_lost(exc)

    def _arm_header_deadline(self) -> None:
        self._disarm_header_deadline()
        self._header_deadline = self.loop.call_later(self.header_timeout, self._headers_too_slow)

    def _disarm_header_deadline(self) -> None:
        if self._header_deadline is not None:
            self._header_deadline.cancel()
            self._header_deadline = None

    def _headers_too_slow(self) -> None:
        self._header_deadline = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()


def protocol_with_header_timeout(seconds: float) -> type[HeaderTimeoutH11Protocol]:
    return type("HeaderTimeoutH11", (HeaderTimeoutH11Protocol,), {"header_timeout": seconds})


class QueryStringFilter(logging.Filter):
    """Drops the query string from uvicorn access lines (their third argument is the path)."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str):
            record.args = (*args[:2], args[2].partition("?")[0], *args[3:])
        return True


def install_access_log_filter(settings: Settings) -> None:
    """Idempotent; run after uvicorn configured its loggers (``uvicorn.Config`` does)."""
    logger = logging.getLogger("uvicorn.access")
    for existing in list(logger.filters):
        if isinstance(existing, QueryStringFilter):
            logger.removeFilter(existing)
    if not settings.server.log_query_strings:
        logger.addFilter(QueryStringFilter())


def uvicorn_config(app: Any, settings: Settings, **overrides: Any) -> uvicorn.Config:
    """The server configuration of ``omoide serve`` (tests pass ``port=0`` and a log level)."""
    values: dict[str, Any] = {
        "host": settings.server.host,
        "port": settings.server.port,
        "log_level": settings.server.log_level.lower(),
        "timeout_graceful_shutdown": 30,
        "timeout_keep_alive": settings.server.keep_alive_timeout,
        "limit_concurrency": settings.server.max_connections,
        "http": protocol_with_header_timeout(settings.server.header_timeout),
        "ws": "none",
        "server_header": False,
    }
    config = uvicorn.Config(app, **(values | overrides))
    install_access_log_filter(settings)
    return config
