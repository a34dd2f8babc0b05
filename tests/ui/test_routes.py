"""What the browser tests stand on, checked over plain HTTP (no browser needed): the page and
its assets are served open and offline, and the read-only listings the UI browses with keep to
the caller's tenant."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.ui.conftest import ALICE_KEY, KEY, Seeded


@pytest.fixture
def anonymous(seeded: Seeded) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=seeded.url, timeout=60) as client:
        yield client


def _as(client: httpx.Client, key: str) -> httpx.Client:
    client.headers["Authorization"] = f"Bearer {key}"
    return client


def test_the_page_and_its_assets_need_no_key(anonymous: httpx.Client) -> None:
    page = anonymous.get("/ui/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert '<script type="module" src="app.js">' in page.text
    assets = [
        ("app.js", "text/javascript"),
        ("graph.js", "text/javascript"),
        ("app.css", "text/css"),
    ]
    for asset, kind in assets:
        reply = anonymous.get(f"/ui/{asset}")
        assert reply.status_code == 200 and reply.headers["content-type"].startswith(kind)
    for reply in [page, *(anonymous.get(f"/ui/{asset}") for asset, _ in assets)]:
        assert reply.headers["x-frame-options"] == "DENY"  # as the docs pages
        assert reply.headers["x-content-type-options"] == "nosniff"
    assert "http" not in anonymous.get("/ui/app.css").text  # nothing fetched from elsewhere
    redirect = anonymous.get("/ui", follow_redirects=False)
    assert (redirect.status_code, redirect.headers["location"]) == (308, "/ui/")


def test_only_the_named_assets_are_served(anonymous: httpx.Client) -> None:
    for path in ["/ui/nope.js", "/ui/index.html.bak", "/ui/..%2Fui.py", "/ui/%2E%2E/app.py"]:
        assert anonymous.get(path).status_code == 404, path
    assert anonymous.post("/ui/").status_code == 401  # open means GET only
    assert anonymous.get("/uix").status_code == 401  # a prefix, not a substring
    assert anonymous.get("/v1/tenants").status_code == 401


def test_tenants_are_listed_for_the_full_key(anonymous: httpx.Client) -> None:
    reply = _as(anonymous, KEY).get("/v1/tenants").json()
    assert reply == {
        "items": [
            {"user_id": "alice", "scope_id": "default"},
            {"user_id": "bob", "scope_id": "default"},
        ],
        "bound": False,
    }


def test_a_bound_key_lists_and_reads_only_its_tenant(anonymous: httpx.Client) -> None:
    client = _as(anonymous, ALICE_KEY)
    reply = client.get("/v1/tenants").json()
    assert reply == {"items": [{"user_id": "alice", "scope_id": "default"}], "bound": True}
    assert client.get("/v1/variables").json()["variables"]["city"] == "Shenzhen"
    assert client.get("/v1/variables", params={"user_id": "bob"}).status_code == 403
    assert client.get("/v1/graph/entities", params={"user_id": "bob"}).status_code == 403


def test_variables_keep_their_types(anonymous: httpx.Client) -> None:
    client = _as(anonymous, KEY)
    reply = client.get("/v1/variables", params={"user_id": "alice"})
    assert reply.json() == {"variables": {"city": "Shenzhen", "cups_per_day": 2}}
    bob = client.get("/v1/variables", params={"user_id": "bob"}).json()
    assert bob == {"variables": {}}


def test_entities_come_a_page_at_a_time(anonymous: httpx.Client, seeded: Seeded) -> None:
    client = _as(anonymous, KEY)
    page = client.get("/v1/graph/entities", params={"user_id": "alice", "limit": 2}).json()
    assert (len(page["items"]), page["total"], page["limit"]) == (2, 5, 2)
    rest = client.get("/v1/graph/entities", params={"user_id": "alice", "offset": 2}).json()
    names = {e["name"] for e in page["items"] + rest["items"]}
    assert names == set(seeded.entities)
    people = client.get("/v1/graph/entities", params={"user_id": "alice", "type": "person"})
    assert [e["name"] for e in people.json()["items"]] == ["Mei"]
    assert client.get("/v1/graph/entities").json()["total"] == 0  # tenant default: none
