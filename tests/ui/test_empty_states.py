"""Without an LLM the graph, variables and summaries pages have nothing to show; each says what
fills it (extraction, which needs an LLM), how to configure one, and how to fill it directly.
Chromium on a live server without a key or an LLM."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from omoide import Memory
from omoide.config import Settings
from omoide.embed import HashEmbedder
from omoide.serve.app import create_app
from tests.api.conftest import LiveServer, make_settings
from tests.ui.conftest import TIMEOUT_MS

expect = pytest.importorskip("playwright.sync_api", reason="playwright is not installed").expect


@pytest.fixture
def fresh(tmp_path: Path) -> Iterator[str]:
    """A server whose only memory is one stored turn: nothing was ever extracted."""
    memory = Memory(
        tmp_path / "fresh.db",
        embedder=HashEmbedder(),
        settings=Settings(llm_base_url=None),
        workers=0,
    )
    memory.add("I like jasmine tea")
    live = LiveServer(create_app(make_settings(), memory=memory)).start()
    try:
        yield live.url
    finally:
        live.stop()
        memory.close()


def test_empty_pages_say_what_fills_them(browser: Any, fresh: str) -> None:
    expect.set_options(timeout=TIMEOUT_MS)
    context = browser.new_context()
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    try:
        tab.goto(f"{fresh}/ui/")
        tab.click("button.tenant-pick[data-tenant='default/default']")
        for view, fills in (
            ("graph", "knowledge graph is extracted"),
            ("variables", "Variables are typed facts"),
            ("summaries", "rolling summary"),
        ):
            tab.click(f"#nav a[data-view='{view}']")
            hint = tab.locator(f"#empty-{view}")
            expect(hint).to_contain_text(fills)
            expect(hint).to_contain_text("No LLM is configured")
            expect(hint).to_contain_text("OMOIDE_LLM_BASE_URL")
    finally:
        context.close()
    assert errors == [], errors
