"""The server as ``omoide serve`` configures uvicorn (issue 15, points 9 and 10).

Slow clients: a connection whose headers trickle in is closed after ``header_timeout``
(uvicorn alone kept it open for as long as bytes kept coming), and connections beyond
``max_connections`` get a 503. Logs: access lines carry paths without query strings.
"""

from __future__ import annotations

import logging
import select
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from omoide import Memory
from omoide.embed import HashEmbedder
from omoide.serve.app import create_app
from omoide.serve.transport import uvicorn_config
from tests.api.conftest import LiveServer, make_settings


@contextmanager
def serving(
    tmp_path: Path, log_level: str = "warning", log: logging.Handler | None = None, **settings: Any
) -> Iterator[str]:
    config = make_settings(**settings)
    access = logging.getLogger("uvicorn.access")
    with Memory(tmp_path / "t.db", embedder=HashEmbedder(), workers=0) as engine:
        app = create_app(config, memory=engine)
        server_config = uvicorn_config(app, config, port=0, log_level=log_level)
        if log is not None:
            access.addHandler(log)  # after uvicorn's dictConfig, which resets the handlers
        live = LiveServer(app, server_config).start()
        try:
            yield live.url
        finally:
            live.stop()
            if log is not None:
                access.removeHandler(log)


def _address(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("http://").split(":")
    return host, int(port)


def _closed_by_server(sock: socket.socket, wait: float) -> bool:
    readable, _, _ = select.select([sock], [], [], wait)
    if not readable:
        return False
    try:
        return sock.recv(4096) == b""
    except ConnectionResetError:
        return True


def _trickle(sock: socket.socket, steps: int = 300) -> int | None:
    """Send one header byte per step, as a slowloris client does; the step the server hung
    up at, or None if it kept listening for all of them."""
    for step in range(steps):
        try:
            sock.sendall(b"x")
        except (BrokenPipeError, ConnectionResetError):
            return step
        if _closed_by_server(sock, wait=0.1):  # the client's pace, not a synchronisation
            return step
    return None


def test_a_client_sending_headers_slowly_is_disconnected(tmp_path: Path) -> None:
    with serving(tmp_path, header_timeout=1.0) as url:
        started = time.monotonic()
        with socket.create_connection(_address(url), timeout=30) as sock:
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            step = _trickle(sock)
        assert step is not None, "the server kept a 30 s trickle of header bytes open"
        assert time.monotonic() - started < 25
        assert httpx.get(url + "/health", timeout=30).status_code == 200  # others still served


def test_the_next_request_on_a_kept_alive_connection_has_the_same_deadline(tmp_path: Path) -> None:
    with (
        serving(tmp_path, header_timeout=1.0, keep_alive_timeout=60) as url,
        socket.create_connection(_address(url), timeout=30) as sock,
    ):
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        reply = b""
        while b"\r\n\r\n" not in reply or not reply.rstrip().endswith(b"}"):
            chunk = sock.recv(65536)
            assert chunk, "closed before the first reply"
            reply += chunk
        assert reply.startswith(b"HTTP/1.1 200")
        sock.sendall(b"GET /health HTTP/1.1\r\nX-Slow: ")
        assert _trickle(sock) is not None


def test_connections_beyond_the_cap_get_a_503(tmp_path: Path) -> None:
    with serving(tmp_path, max_connections=2, header_timeout=60) as url:
        idle = [socket.create_connection(_address(url), timeout=30) for _ in range(2)]
        try:
            status = _poll(lambda: httpx.get(url + "/health", timeout=30).status_code, 503)
            assert status == 503
        finally:
            for sock in idle:
                sock.close()
        assert _poll(lambda: httpx.get(url + "/health", timeout=30).status_code, 200) == 200


def _poll(call: Callable[[], int], wanted: int, bound: float = 20.0) -> int:
    """``call()`` until it returns ``wanted`` (the server has seen the sockets come and go)."""
    deadline = time.monotonic() + bound
    while True:
        got = call()
        if got == wanted or time.monotonic() > deadline:
            return got
        time.sleep(0.05)


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def _access_line(url: str, handler: _Lines, path: str) -> str:
    httpx.get(url + path, timeout=30)
    deadline = time.monotonic() + 20
    while not any("/v1/memories" in line for line in handler.lines):
        assert time.monotonic() < deadline, "no access line was logged"
        time.sleep(0.02)
    return next(line for line in handler.lines if "/v1/memories" in line)


def test_access_lines_have_no_query_strings(tmp_path: Path) -> None:
    access_lines = _Lines()
    with serving(tmp_path, log_level="info", log=access_lines) as url:
        line = _access_line(url, access_lines, "/v1/memories?user_id=alice-secret-id&limit=5")
    assert '"GET /v1/memories HTTP/1.1" 200' in line
    assert "alice-secret-id" not in line and "?" not in line


def test_query_strings_can_be_logged_on_request(tmp_path: Path) -> None:
    access_lines = _Lines()
    with serving(tmp_path, log_level="info", log=access_lines, log_query_strings=True) as url:
        line = _access_line(url, access_lines, "/v1/memories?user_id=alice")
    assert "/v1/memories?user_id=alice" in line


def _read_until_hang_up(sock: socket.socket) -> bytes:
    """Everything the server sent before it closed the connection.

    A body byte sent just as the server closes makes its kernel answer with a reset, which the
    next ``recv`` reports after the queued reply has been read: that is the hang-up too.
    """
    reply = b""
    try:
        while chunk := sock.recv(65536):
            reply += chunk
    except ConnectionResetError:
        pass
    return reply


def test_a_client_sending_its_body_slowly_gets_a_408(tmp_path: Path) -> None:
    with serving(tmp_path, body_timeout=1.0) as url:
        head = (
            b"POST /v1/memories HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\nContent-Length: 10000\r\n\r\n"
        )
        with socket.create_connection(_address(url), timeout=30) as sock:
            sock.sendall(head + b'{"text": "')
            for _ in range(300):  # one body byte per step, at most 30 s
                readable, _, _ = select.select([sock], [], [], 0.1)
                if readable:
                    break
                sock.sendall(b"y")
            reply = _read_until_hang_up(sock)
        assert reply.startswith(b"HTTP/1.1 408"), reply[:200]
        assert b"OMOIDE_BODY_TIMEOUT" in reply
        assert httpx.get(url + "/health", timeout=30).status_code == 200
