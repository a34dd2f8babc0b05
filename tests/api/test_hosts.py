"""DNS rebinding: a server answers only Host names on its allowed list (issue 15, point 4).

A web page on ``evil.example`` can rebind its name to 127.0.0.1; the browser then sends the
page's requests, with ``Host: evil.example``, to a keyless local server and lets the page read
the answers. A Host that is not on the list is a 400 and reaches no route.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable

import httpx
import pytest

from omoide.config import Settings, host_name
from omoide.types import Scope
from tests.api.conftest import KEY, Running


def _get(server: Running, host: str, path: str = "/v1/memories") -> httpx.Response:
    with server.http() as http:
        return http.get(path, headers={"Host": host})


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8000", "127.0.0.1.nip.io", "0"])
def test_a_foreign_host_is_a_400_on_a_loopback_server(server: Running, host: str) -> None:
    server.engine.add("a private memory")
    response = _get(server, host)
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["error"]["code"] == "bad_host" and "OMOIDE_ALLOWED_HOSTS" in body["detail"]
    assert "private" not in response.text
    assert _get(server, host, "/health").status_code == 400
    with server.http() as http:
        deleted = http.delete(
            "/v1/memories",
            params={"user_id": "default", "scope_id": "default"},
            headers={"Host": host},
        )
    assert deleted.status_code == 400
    assert server.engine.get_all().total == 1


@pytest.mark.parametrize(
    "host", ["localhost", "localhost:8000", "LOCALHOST:1", "127.0.0.1", "127.0.0.1:9", "[::1]:8000"]
)
def test_loopback_names_with_any_port_are_answered(server: Running, host: str) -> None:
    assert _get(server, host).status_code == 200


def test_a_request_without_host_is_answered(server: Running) -> None:
    # HTTP/1.0 has no Host; browsers always send one, so it cannot come from a rebinding page.
    host, port = server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(b"GET /health HTTP/1.0\r\n\r\n")
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    assert reply.startswith(b"HTTP/1.1 200"), reply[:200]


def test_allowed_hosts_are_configurable(start_server: Callable[..., Running]) -> None:
    server = start_server(allowed_hosts=["memory.internal"])
    assert _get(server, "memory.internal:8000").status_code == 200
    assert _get(server, "localhost").status_code == 400
    anything = start_server(allowed_hosts=["*"])
    assert _get(anything, "whatever.example").status_code == 200


def test_the_setting_reads_a_comma_separated_list(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMOIDE_ALLOWED_HOSTS", "a.example, B.example:80 ,[::1]")
    hosts = Settings().server.host_allowlist()
    assert hosts == {"a.example", "b.example", "::1"}
    monkeypatch.delenv("OMOIDE_ALLOWED_HOSTS")
    assert Settings(host="127.0.0.1").server.host_allowlist() == {"localhost", "127.0.0.1", "::1"}
    # Bound to a public address a key is required; any name reaches it unless a list is set.
    assert Settings(host="0.0.0.0").server.host_allowlist() is None


@pytest.mark.parametrize(
    ("header", "name"),
    [
        ("localhost:80", "localhost"),
        ("[::1]:8000", "::1"),
        ("[::1]", "::1"),
        ("Example.COM.", "example.com"),
        ("::1", "::1"),
    ],
)
def test_host_name_drops_the_port(header: str, name: str) -> None:
    assert host_name(header) == name


# cross-site writes ----------------------------------------------------------------------------
def _failed_job(server: Running) -> int:
    with server.engine.store.transaction() as tx:
        job_id = tx.jobs.enqueue_job(Scope(), "no-such-kind", {}, max_attempts=1)
    deadline = time.monotonic() + 10
    while server.engine.job_counts()["failed"] == 0:
        assert time.monotonic() < deadline, "the worker did not fail the job"
        time.sleep(0.02)
    return job_id


def _retry(server: Running, job_id: int, origin: str) -> httpx.Response:
    # What a page's ``fetch(url, {method: "POST", mode: "no-cors"})`` sends: no body, so no
    # preflight, and the page's site in ``Origin``.
    with server.http() as http:
        return http.post(f"/v1/jobs/{job_id}/retry", headers={"Origin": origin})


@pytest.mark.parametrize("origin", ["https://evil.example", "null", "http://127.0.0.1.nip.io"])
def test_another_sites_page_cannot_post_to_a_keyless_loopback_server(
    server: Running, origin: str
) -> None:
    job_id = _failed_job(server)
    refused = _retry(server, job_id, origin)
    assert refused.status_code == 403, refused.text
    assert refused.json()["error"]["code"] == "cross_site"
    assert "OMOIDE_CORS_ORIGINS" in refused.json()["detail"]
    assert server.engine.job_counts()["failed"] == 1  # the job was not queued again
    with server.http() as http:  # reading is not refused: the page cannot read the answer
        assert http.get("/v1/jobs/stats", headers={"Origin": origin}).status_code == 200


@pytest.mark.parametrize(
    "origin", ["http://localhost:5173", "http://127.0.0.1:8000", "http://[::1]"]
)
def test_a_loopback_page_may_post(server: Running, origin: str) -> None:
    job_id = _failed_job(server)
    retried = _retry(server, job_id, origin)
    assert retried.status_code == 200, retried.text
    assert retried.json()["state"] == "pending"


def test_cors_origins_may_post(start_server: Callable[..., Running]) -> None:
    server = start_server(cors_origins=["https://app.example"])
    job_id = _failed_job(server)
    assert _retry(server, job_id, "https://app.example").status_code == 200
    with server.http() as http:
        posted = http.post(
            "/v1/memories", json={"text": "x"}, headers={"Origin": "https://other.example"}
        )
    assert posted.status_code == 403


def test_a_keyed_server_leaves_origins_to_the_key(start_server: Callable[..., Running]) -> None:
    # A page cannot send the key; a keyed server is often behind a proxy under another name.
    server = start_server(api_key=KEY)
    with server.http(KEY) as http:
        posted = http.post(
            "/v1/memories", json={"text": "x"}, headers={"Origin": "https://app.example"}
        )
    assert posted.status_code == 201


def test_with_any_host_allowed_a_page_may_post_only_to_its_own_host(
    start_server: Callable[..., Running],
) -> None:
    server = start_server(allowed_hosts=["*"])
    job_id = _failed_job(server)
    assert _retry(server, job_id, "https://evil.example").status_code == 403
    with server.http() as http:
        retried = http.post(
            f"/v1/jobs/{job_id}/retry",
            headers={"Origin": "http://memory.internal:8080", "Host": "memory.internal"},
        )
    assert retried.status_code == 200, retried.text
