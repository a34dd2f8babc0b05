"""The web UI on a keyless loopback server (``omoide serve``'s default) in Chromium: its own
writes go through, while another page open in the same browser cannot post to the server."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from omoide import Memory
from omoide.config import Settings
from omoide.embed import HashEmbedder
from omoide.serve.app import create_app
from tests.api.conftest import LiveServer, make_settings
from tests.ui.conftest import TIMEOUT_MS, Seeded, seed

expect = pytest.importorskip("playwright.sync_api", reason="playwright is not installed").expect


@pytest.fixture
def keyless(tmp_path: Path) -> Iterator[Seeded]:
    memory = Memory(
        tmp_path / "ui.db",
        embedder=HashEmbedder(),
        settings=Settings(llm_base_url=None),
        workers=0,
    )
    ids, entities, job = seed(memory)
    live = LiveServer(create_app(make_settings(), memory=memory)).start()
    try:
        yield Seeded(live.url, memory, ids, entities, job)
    finally:
        live.stop()
        memory.close()


@pytest.fixture
def tab(browser: Any) -> Iterator[Any]:
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    expect.set_options(timeout=TIMEOUT_MS)
    yield page
    context.close()


@pytest.fixture
def other_site() -> Iterator[str]:
    """A page on http://127.0.0.2, a site the server does not answer to."""

    class Page(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b"<!doctype html><p>a page on another site</p>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.2", 0), Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.2:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def test_another_page_cannot_retry_a_job_but_the_ui_can(
    tab: Any, keyless: Seeded, other_site: str
) -> None:
    job = keyless.failed_job
    # Another site's page posts without a body, so without a preflight; it cannot read the
    # answer, and need not. (127.0.0.2: another origin that Chromium lets reach loopback.)
    tab.goto(other_site)
    sent = tab.evaluate(
        "url => fetch(url, {method: 'POST', mode: 'no-cors'}).then(r => r.type, e => String(e))",
        f"{keyless.url}/v1/jobs/{job}/retry",
    )
    assert sent == "opaque"  # the request went out
    assert keyless.engine.store.jobs.get_job(job).state == "failed"

    tab.goto(f"{keyless.url}/ui/")
    tab.click("button.tenant-pick[data-tenant='alice/default']")
    tab.click("#nav a[data-view='jobs']")
    row = tab.locator(f"#jobs tr[data-job='{job}']")
    row.locator("button.retry").click()
    expect(row).to_have_attribute("data-state", "pending")
    assert keyless.engine.store.jobs.get_job(job).state == "pending"
