"""The main flows of the web UI, clicked through in Chromium: the key prompt, tenants,
sessions with their episodes and memories, a memory's history, validity and provenance, search
with per-signal scores, the entity graph and its depth slider, variables, summaries, retrying a
failed job and deleting a memory after a confirmation."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from tests.ui.conftest import ALICE_KEY, KEY, SESSION, Seeded, shot

# Skip (saying why) rather than fail to collect where the dev extra is not installed.
expect = pytest.importorskip("playwright.sync_api", reason="playwright is not installed").expect


def login(page: Any, seeded: Seeded, key: str = KEY) -> None:
    page.goto(f"{seeded.url}/ui/")
    expect(page.locator("#key-dialog")).to_be_visible()
    page.fill("#key-input", key)
    page.click("#key-submit")
    expect(page.locator("#tenants")).to_be_visible()


def open_alice(page: Any) -> None:
    page.click("button.tenant-pick[data-tenant='alice/default']")
    expect(page.locator("#sessions")).to_be_visible()
    expect(page.locator("#tenant")).to_have_text("alice / default")


def test_the_key_prompt_then_the_tenants(page: Any, seeded: Seeded) -> None:
    page.goto(f"{seeded.url}/ui/")
    expect(page.locator("#key-dialog")).to_be_visible()
    shot(page, "01-key-prompt")
    page.fill("#key-input", "wrong-key")
    page.click("#key-submit")
    expect(page.locator("#key-error")).to_have_text("That key was not accepted.")
    page.fill("#key-input", KEY)
    page.click("#key-submit")
    tenants = page.locator("#tenants tbody tr")
    expect(tenants).to_have_count(2)
    expect(tenants.first).to_contain_text("alice")
    expect(tenants.last).to_contain_text("bob")
    shot(page, "02-tenants")
    # The key went in the header only; every asset and call stayed on this server (offline).
    assert all(request.url.startswith(seeded.url) for request in page.requested)
    assert not any(KEY in request.url for request in page.requested)
    keys = [r.headers.get("authorization") for r in page.requested if "/v1/" in r.url]
    assert keys[0] is None and keys[-1] == f"Bearer {KEY}"  # asked for, then sent


def test_a_session_its_episodes_and_a_memory_with_history(page: Any, seeded: Seeded) -> None:
    login(page, seeded)
    open_alice(page)
    shot(page, "03-sessions")
    page.click(f"a.session-link:text-is('{SESSION}')")
    expect(page.locator("#episodes article.episode")).to_have_count(2)
    expect(page.locator("#episodes")).to_contain_text("I moved to Shenzhen last week")

    def row(name: str) -> Any:
        return page.locator(f"#session-memories tr[data-id='{seeded.memories[name]}']")

    for name in ("tea", "moved", "new_fact"):
        expect(row(name)).to_be_visible()
    expect(row("old_fact")).to_have_class("gone")  # superseded: shown, struck through
    expect(row("doomed")).to_have_count(0)  # not from this session
    shot(page, "04-session")

    page.click(f"tr[data-id='{seeded.memories['tea']}'] a.memory-link")
    expect(page.locator("#memory-text")).to_contain_text("two cups")
    history = page.locator("#history tbody tr")
    expect(history).to_have_count(2)
    expect(history.nth(0)).to_contain_text("ADD")
    expect(history.nth(1)).to_contain_text("UPDATE")
    expect(history.nth(1)).to_contain_text("every morning, two cups")
    expect(page.locator("#memory-fields")).to_contain_text("(valid now)")
    shot(page, "05-memory")


def test_a_superseded_fact_shows_its_validity_and_provenance(page: Any, seeded: Seeded) -> None:
    login(page, seeded)
    open_alice(page)
    page.goto(f"{seeded.url}/ui/#/memory/{seeded.memories['new_fact']}")
    fields = page.locator("#memory-fields")
    expect(fields).to_contain_text("(valid now)")
    page.click(f"#memory-fields a[href='#/memory/{seeded.memories['old_fact']}']")
    expect(page.locator("#memory-text")).to_have_text("Mei lives in Beijing")
    expect(fields).to_contain_text("(no longer valid)")
    shot(page, "06-memory-superseded")
    page.click("#memory-fields a.episode-link")  # its source episode, in its session
    expect(page.locator("#episodes article.episode.focus")).to_contain_text("jasmine tea")


def test_search_shows_each_signal(page: Any, seeded: Seeded) -> None:
    login(page, seeded)
    open_alice(page)
    page.click("#nav a[data-view='search']")
    page.fill("#search-input", "jasmine tea")
    page.press("#search-input", "Enter")
    hits = page.locator("#results tbody tr.hit")
    expect(hits.first).to_contain_text("jasmine tea")
    expect(page.locator("#results thead")).to_contain_text("keyword (rank · score)")
    expect(page.locator("#results thead")).to_contain_text("vector (rank · score)")
    # each hit shows its rank and score in each signal; the order is the relevance's, so the
    # keyword list's first is a hit, not necessarily the first
    expect(hits.first.locator("td.signal.keyword")).to_have_text(re.compile(r"#\d+ · \d+\.\d{3}"))
    expect(page.locator("#results td.signal.keyword", has_text="#1 · ")).to_have_count(1)
    expect(hits.first.locator("td.score")).to_have_text(re.compile(r"\d\.\d{3}"))
    shot(page, "07-search")


def test_the_graph_and_its_depth_slider(page: Any, seeded: Seeded) -> None:
    login(page, seeded)
    open_alice(page)
    page.click("#nav a[data-view='graph']")
    page.click(".entity-list a:text-is('Mei')")
    nodes = page.locator("#graph-svg g.node")
    expect(nodes).to_have_count(3)  # Mei, Shenzhen, jasmine tea
    expect(page.locator("#graph-centre")).to_have_text("Mei")
    page.locator("#depth").fill("3")
    expect(nodes).to_have_count(5)  # + Guangdong, China
    expect(page.locator("#depth-value")).to_have_text("3")
    expect(page.locator("#graph-svg g.node[data-name='China']")).to_be_visible()
    expect(page.locator("#edges tbody tr")).to_have_count(4)
    shot(page, "08-graph")
    tea = page.locator("#graph-svg g.node[data-name='jasmine tea']")
    before = tea.get_attribute("transform")
    box = tea.locator("circle").bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(box["x"] - 60, box["y"] + 40, steps=5)
    page.mouse.up()
    assert tea.get_attribute("transform") != before  # dragged, not recentred
    expect(page.locator("#graph-centre")).to_have_text("Mei")
    page.locator("#depth").fill("0")
    expect(nodes).to_have_count(1)
    expect(page.locator("#graph-svg g.node[data-name='Mei']")).to_be_visible()  # still Mei
    page.locator("#depth").fill("1")
    expect(nodes).to_have_count(3)
    page.locator("#graph-svg g.node[data-name='Shenzhen']").click()  # recentre on a neighbour
    expect(page.locator("#graph-centre")).to_have_text("Shenzhen")
    expect(nodes).to_have_count(3)  # Shenzhen, Mei, Guangdong


def test_variables_and_summaries(page: Any, seeded: Seeded) -> None:
    login(page, seeded)
    open_alice(page)
    page.click("#nav a[data-view='variables']")
    rows = page.locator("#variables tbody tr")
    expect(rows).to_have_count(2)
    expect(page.locator("#variables")).to_contain_text("Shenzhen")
    shot(page, "09-variables")
    page.click("#nav a[data-view='summaries']")
    page.select_option("#summary-session", SESSION)
    cards = page.locator("article.summary")
    expect(cards).to_have_count(2)
    expect(cards.first).to_contain_text("rolling")  # the newest is the session's summary
    expect(cards.first).to_contain_text("moved from Beijing to Shenzhen")
    shot(page, "10-summaries")
    cards.last.locator("button.danger").click()
    page.click("#confirm-ok")
    expect(cards).to_have_count(1)
    expect(cards.first).to_contain_text("moved from Beijing to Shenzhen")


def test_retry_a_failed_job(page: Any, seeded: Seeded) -> None:
    login(page, seeded)
    open_alice(page)
    page.click("#nav a[data-view='jobs']")
    row = page.locator(f"#jobs tr[data-job='{seeded.failed_job}']")
    expect(row).to_have_attribute("data-state", "failed")
    expect(row).to_contain_text("no handler for job kind")
    shot(page, "11-jobs")
    row.locator("button.retry").click()
    expect(row).to_have_attribute("data-state", "pending")
    expect(row.locator("button.retry")).to_have_count(0)
    assert seeded.engine.store.jobs.get_job(seeded.failed_job).state == "pending"


def test_delete_a_memory_only_after_confirming(page: Any, seeded: Seeded) -> None:
    login(page, seeded)
    open_alice(page)
    doomed = seeded.memories["doomed"]
    page.click("#nav a[data-view='memories']")
    page.click(f"tr[data-id='{doomed}'] a.memory-link")
    page.click("#delete-memory")
    expect(page.locator("#confirm-dialog")).to_be_visible()
    expect(page.locator("#confirm-text")).to_contain_text("delete me")
    shot(page, "12-delete-confirm")
    page.click("#confirm-cancel")
    expect(page.locator("#confirm-dialog")).to_be_hidden()
    assert seeded.engine.get(doomed, user_id="alice").text.startswith("delete me")

    page.click("#delete-memory")
    page.click("#confirm-ok")
    expect(page.locator("#toast")).to_have_text("Memory deleted.")
    expect(page.locator("table.memories")).to_be_visible()
    expect(page.locator(f"tr[data-id='{doomed}']")).to_have_count(0)
    with httpx.Client(base_url=seeded.url, headers={"Authorization": f"Bearer {KEY}"}) as http:
        assert http.get(f"/v1/memories/{doomed}", params={"user_id": "alice"}).status_code == 404


def test_a_bound_key_sees_only_its_tenant(page: Any, seeded: Seeded) -> None:
    login(page, seeded, ALICE_KEY)
    tenants = page.locator("#tenants tbody tr")
    expect(tenants).to_have_count(1)
    expect(tenants.first).to_contain_text("alice")
    open_alice(page)
    page.click("#nav a[data-view='jobs']")
    expect(page.locator("#jobs")).to_be_visible()
    expect(page.locator("text=every tenant")).to_have_count(0)
    # Typing another tenant in is refused by the API, and the page says so.
    page.goto(f"{seeded.url}/ui/#/tenants")
    page.fill("#tenant-form input[name='user_id']", "bob")
    page.click("#tenant-form button")
    expect(page.locator("main .error")).to_contain_text("cannot access user 'bob'")


def test_delete_a_session_with_its_memories(page: Any, seeded: Seeded) -> None:
    auth = {"Authorization": f"Bearer {KEY}"}
    with httpx.Client(base_url=seeded.url, headers=auth, timeout=60) as http:
        body = {"messages": [{"content": "a scratch note"}], "user_id": "alice"}
        assert http.post("/v1/sessions/scratch/episodes", json=body).status_code == 201
        login(page, seeded)
        open_alice(page)
        page.click("a.session-link:text-is('scratch')")
        expect(page.locator("#episodes")).to_contain_text("a scratch note")
        page.click("#delete-session")
        expect(page.locator("#confirm-text")).to_contain_text("“scratch”")
        page.click("#confirm-ok")
        expect(page.locator("#toast")).to_have_text("Session deleted with 1 memory.")
        expect(page.locator("a.session-link:text-is('scratch')")).to_have_count(0)
        expect(page.locator(f"a.session-link:text-is('{SESSION}')")).to_be_visible()
        gone = http.get("/v1/sessions/scratch", params={"user_id": "alice"})
        assert gone.status_code == 404
