"""The web UI in a real headless Chromium (Debian's, driven by Playwright) against a real
uvicorn server over a seeded SQLite file. Without the browser or Playwright the browser tests
skip and say why; screenshots land in ``tests/ui/artifacts/`` (or ``$OMOIDE_UI_ARTIFACTS``).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from omoide import Memory
from omoide.config import Settings, TenantKey
from omoide.embed import HashEmbedder
from omoide.serve.app import create_app
from omoide.store.ports.memories import NewMemory
from omoide.types import MemoryType, Scope, now_ms
from tests.api.conftest import LiveServer, make_settings

KEY = "ui-test-key"
ALICE_KEY = "alice-only-key"
ALICE = Scope(user_id="alice")
BOB = Scope(user_id="bob")
SESSION = "trip/planning"  # a "/" in the id: it must survive URLs and hashes
ARTIFACTS = Path(os.environ.get("OMOIDE_UI_ARTIFACTS", Path(__file__).parent / "artifacts"))
CHROMIUM = os.environ.get("OMOIDE_CHROMIUM", "/usr/bin/chromium")
TIMEOUT_MS = 30_000  # generous: the machine is shared; waits end as soon as the page is ready


@dataclass
class Seeded:
    """What the seed wrote, by name, so tests can find it on the page."""

    url: str
    engine: Memory
    memories: dict[str, str]
    entities: dict[str, str]
    failed_job: int


def _seed_conversation(memory: Memory) -> dict[str, str]:
    first = memory.add(
        [
            {"role": "user", "content": "I live in Beijing and I drink jasmine tea every morning"},
            {"role": "assistant", "content": "Noted: Beijing, and jasmine tea."},
        ],
        user_id="alice",
        session_id=SESSION,
    )
    second = memory.add(
        [{"role": "user", "content": "Big news: I moved to Shenzhen last week"}],
        user_id="alice",
        session_id=SESSION,
    )
    doomed = memory.add("delete me: an outdated note about the old flat", user_id="alice")
    memory.add("bob likes green tea", user_id="bob")
    tea = first[0]
    memory.update(
        tea.id, "I live in Beijing and I drink jasmine tea every morning, two cups", user_id="alice"
    )
    return {"tea": tea.id, "moved": second[0].id, "doomed": doomed[0].id}


def _seed_facts(memory: Memory, episodes: list[str]) -> dict[str, str]:
    """A fact and its newer version, written as extraction would, with their provenance."""
    with memory.store.transaction() as tx:
        old = tx.memories.insert_memory(
            ALICE,
            NewMemory(
                "Mei lives in Beijing",
                MemoryType.SEMANTIC,
                session_id=SESSION,
                source_episodes=[episodes[0]],
            ),
            actor="extraction",
        )
        new = tx.memories.supersede_memory(
            ALICE,
            old.id,
            NewMemory(
                "Mei lives in Shenzhen",
                MemoryType.SEMANTIC,
                session_id=SESSION,
                source_episodes=[episodes[1]],
            ),
            now_ms(),
            actor="extraction",
        )
    return {"old_fact": old.id, "new_fact": new.id}


def _seed_graph(memory: Memory, episode: str) -> dict[str, str]:
    """Mei -lives in-> Shenzhen -in-> Guangdong -in-> China; Mei -drinks-> jasmine tea."""
    edges = [
        ("Mei", "lives in", "Shenzhen"),
        ("Shenzhen", "in", "Guangdong"),
        ("Guangdong", "in", "China"),
        ("Mei", "drinks", "jasmine tea"),
    ]
    with memory.store.transaction() as tx:
        found = {}
        for name in dict.fromkeys(n for a, _, b in edges for n in (a, b)):
            kind = "person" if name == "Mei" else "place"
            found[name] = tx.graph.upsert_entity(ALICE, name, kind, now_ms(), episode)
        for a, label, b in edges:
            tx.graph.upsert_relationship(ALICE, found[a].id, found[b].id, label, None, now_ms())
    return {name: entity.id for name, entity in found.items()}


def _failed_job(memory: Memory) -> int:
    """A job no handler knows, with one attempt: running it fails it for good."""
    with memory.store.transaction() as tx:
        job_id = tx.jobs.enqueue_job(ALICE, "no-such-kind", {}, max_attempts=1)
    memory.run_jobs()
    assert memory.store.jobs.get_job(job_id).state == "failed"
    return job_id


def seed(memory: Memory) -> tuple[dict[str, str], dict[str, str], int]:
    ids = _seed_conversation(memory)
    episodes, _ = memory.list_episodes(SESSION, user_id="alice")
    ids |= _seed_facts(memory, [e.id for e in episodes])
    entities = _seed_graph(memory, episodes[1].id)
    memory.update_variables({"city": "Shenzhen", "cups_per_day": 2}, user_id="alice")
    memory.create_summary(SESSION, "Alice lived in Beijing.", user_id="alice")
    memory.create_summary(
        SESSION, "Alice moved from Beijing to Shenzhen; jasmine tea.", user_id="alice"
    )
    return ids, entities, _failed_job(memory)


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Seeded]:
    """One keyed server per test module; workers=0 so a retried job stays visibly pending."""
    db = tmp_path_factory.mktemp("ui") / "ui.db"
    memory = Memory(db, embedder=HashEmbedder(), settings=Settings(llm_base_url=None), workers=0)
    ids, entities, job = seed(memory)
    settings = make_settings(api_key=KEY, tenant_keys={ALICE_KEY: TenantKey(user_id="alice")})
    live = LiveServer(create_app(settings, memory=memory)).start()
    try:
        yield Seeded(live.url, memory, ids, entities, job)
    finally:
        live.stop()
        memory.close()


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    if not shutil.which(CHROMIUM):
        pytest.skip(f"no browser at {CHROMIUM} (apt-get install chromium, or set OMOIDE_CHROMIUM)")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=shutil.which(CHROMIUM))
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Any, seeded: Seeded) -> Iterator[Any]:
    """A fresh tab (empty sessionStorage) that records every request it makes; the test fails
    if the page's script raises."""
    from playwright.sync_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    tab = context.new_page()
    tab.set_default_timeout(TIMEOUT_MS)
    tab.requested = []
    tab.on("request", lambda request: tab.requested.append(request))
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    yield tab
    context.close()
    assert errors == [], "the page's script raised"


def shot(page: Any, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    print(f"screenshot: {path}")  # noqa: T201 - the artifact's path, shown with -s / on failure
    return path
