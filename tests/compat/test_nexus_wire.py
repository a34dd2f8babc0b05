"""nexusAI's own shapes over real HTTP: units (unix seconds, last_accessed_at in ms), one
search hit per exchange, writes to unknown sessions, deleting isolated projects, entity and
relationship upserts, and the nexusAI entry point's environment variables."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from omoide.compat.nexus.server import NEXUS_PORT, nexus_settings
from tests.api.conftest import Running

MEI = {"user_id": "mei"}


def _ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


def _session(http: httpx.Client, sid: str, **fields: Any) -> Any:
    return _ok(http.post("/sessions", json={"external_id": sid, **fields} | MEI), 201)


def _exchange(http: httpx.Client, sid: str, user: str, ai: str) -> Any:
    body = {"session_id": sid, "user_message": user, "ai_response": ai} | MEI
    return _ok(http.post("/episodes", json=body), 201)


def test_units_are_nexusai_s_and_v1_keeps_iso(http: httpx.Client) -> None:
    before = int(time.time())
    session = _session(http, "s1")
    assert isinstance(session["created_at"], int) and before - 5 <= session["created_at"]
    episode = _exchange(http, "s1", "hello there", "hi")["episode"]
    assert episode["access_count"] == 0 and episode["last_accessed_at"] is None
    _ok(http.post("/episodes/touch", json={"episode_ids": [episode["id"]]} | MEI))
    touched = _ok(http.get(f"/episodes/{episode['id']}", params=MEI))
    assert touched["access_count"] == 1
    # created_at in seconds, last_accessed_at in milliseconds (nexusAI's Date.now())
    assert touched["last_accessed_at"] // 1000 - touched["created_at"] in range(-5, 60)
    assert touched["last_accessed_at"] > 10**12 > touched["created_at"]
    v1 = _ok(http.get("/v1/sessions/s1", params=MEI))
    assert isinstance(v1["created_at"], str) and "T" in v1["created_at"]


def test_episode_search_is_one_hit_per_exchange(http: httpx.Client) -> None:
    _session(http, "s1")
    _session(http, "s2")
    both = _exchange(http, "s1", "tomatoes in the greenhouse", "tomatoes love the heat")
    _exchange(http, "s2", "tomatoes again", "sure")
    found = _ok(http.get("/episodes/search", params={"q": "tomatoes", **MEI}))["episodes"]
    assert len(found) == 2  # the exchange whose two messages match is one hit
    assert {e["session_id"] for e in found} == {"s1", "s2"}
    assert all(isinstance(e["score"], float) and e["score"] > 0 for e in found)
    assert [e["id"] for e in found if e["session_id"] == "s1"] == [both["episode_id"]]
    assert found[0]["score"] >= found[1]["score"]


def test_writes_naming_an_unknown_session_are_404(server: Running, http: httpx.Client) -> None:
    body = {"session_id": "stray", "user_message": "hello"} | MEI
    assert http.post("/episodes", json=body).status_code == 404
    summary = {"session_id": "stray", "text": "x"} | MEI
    assert http.post("/summaries", json=summary).status_code == 404
    assert http.get("/sessions/stray", params=MEI).status_code == 404  # nothing was created
    assert server.engine.store.admin.stats()["memories"] == 0


def _secret_project(http: httpx.Client) -> None:
    _ok(http.post("/projects", json={"name": "vault", "isolated": True} | MEI), 201)
    _session(http, "inside", project="vault")
    _exchange(http, "inside", "The tomato password is hunter2", "noted")


def _visible(http: httpx.Client, q: str) -> list[str]:
    found = _ok(http.get("/episodes/search", params={"q": q, **MEI}))["episodes"]
    return [e["user_message"] for e in found]


def test_deleting_an_isolated_project_never_widens_who_sees_it(http: httpx.Client) -> None:
    _secret_project(http)
    refused = http.delete("/projects/vault", params=MEI)
    assert refused.status_code == 409 and "sessions=delete" in refused.json()["error"]["message"]
    assert _visible(http, "hunter2") == []  # still isolated, project still there
    assert _ok(http.get("/projects/vault", params=MEI))["isolated"] is True
    gone = _ok(http.delete("/projects/vault", params=MEI | {"sessions": "delete"}))
    assert gone == {"name": "vault", "sessions_detached": 0, "sessions_deleted": 1}
    assert _visible(http, "hunter2") == []
    assert http.get("/sessions/inside", params=MEI).status_code == 404


def test_detaching_an_isolated_projects_sessions_is_explicit(http: httpx.Client) -> None:
    _secret_project(http)
    shared = _ok(http.delete("/projects/vault", params=MEI | {"sessions": "detach"}))
    assert shared["sessions_detached"] == 1
    assert _visible(http, "hunter2") == ["The tomato password is hunter2"]
    assert http.delete("/projects/x", params=MEI | {"sessions": "wipe"}).status_code == 422


def test_entities_and_relationships_upsert_like_nexusai(http: httpx.Client) -> None:
    lin = _ok(http.post("/entities", json={"name": "Lin", "type": "person"} | MEI), 201)
    assert (lin["mention_count"], lin["source"], lin["confidence"]) == (1, "api", 1.0)
    acme = _ok(http.post("/entities", json={"name": "Acme", "type": "org"} | MEI), 201)
    again = _ok(http.post("/entities", json={"name": "Lin", "type": "person"} | MEI), 201)
    assert again["id"] == lin["id"] and again["mention_count"] == 2
    assert again["last_seen_at"] >= lin["last_seen_at"] and isinstance(again["created_at"], int)
    # One entity per name within a tenant (issue 16: invented types split one person into
    # several); nexusAI keys on (name, type). The first specific type stays.
    other = _ok(http.post("/entities", json={"name": "lin", "type": "place"} | MEI), 201)
    assert (other["id"], other["type"], other["mention_count"]) == (lin["id"], "person", 3)

    edge = {"from_id": lin["id"], "to_id": acme["id"], "label": "works at"}
    first = _ok(http.post("/relationships", json=edge | {"notes": "since 2020"} | MEI), 201)
    assert (first["mention_count"], first["notes"]) == (1, "since 2020")
    second = _ok(http.post("/relationships", json=edge | {"notes": "changed"} | MEI), 201)
    assert second["id"] == first["id"]
    assert (second["mention_count"], second["notes"]) == (2, "since 2020")
    assert set(second) >= {"from_id", "to_id", "label", "mention_count", "notes"}
    near = _ok(http.get(f"/entities/{lin['id']}/neighborhood", params=MEI))
    assert {n["name"] for n in near["nodes"]} == {"Lin", "Acme"}
    bad = edge | {"to_id": "nope"}
    assert http.post("/relationships", json=bad | MEI).status_code == 404
    bob = {"user_id": "bob"}
    assert http.post("/relationships", json=edge | bob).status_code == 404


def test_the_entry_point_maps_nexusai_variables(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("PORT", "OMOIDE_PORT", "DB_URL", "OMOIDE_DB_URL"):
        monkeypatch.delenv(name, raising=False)
    settings, notes = nexus_settings({"SQLITE_PATH": "nexus.db", "QDRANT_URL": ""})
    assert settings.server.port == NEXUS_PORT == 3002 and settings.compat.nexus
    assert settings.store.db_path == tmp_path / "nexus.db" and notes == []


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_the_entry_point_serves_nexus_routes_on_port_and_sqlite_path(tmp_path: Path) -> None:
    port, db = _free_port(), tmp_path / "memory.db"
    env = {
        **os.environ,
        "HOME": str(tmp_path),
        "PORT": str(port),
        "SQLITE_PATH": str(db),
        "OMOIDE_EMBEDDER": "hash",
        "EMBEDDING_SERVICE_URL": "http://localhost:3003",
        "INFERENCE_SERVICE_URL": "http://localhost:3001",
    }
    for name in ("OMOIDE_PORT", "DB_URL", "OMOIDE_DB_URL", "OMOIDE_DATA_DIR"):
        env.pop(name, None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "omoide.compat.nexus.server"],
        env=env,
        cwd=tmp_path,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:  # wait until it answers (or has died), with a generous bound
            assert proc.poll() is None and time.monotonic() < deadline, "did not start"
            try:
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        made = httpx.post(f"{url}/sessions", json={"external_id": "s1"}, timeout=10)
        assert made.status_code == 201 and isinstance(made.json()["created_at"], int)
        assert db.is_file()
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert "EMBEDDING_SERVICE_URL is set but not used" in err
    assert "INFERENCE_SERVICE_URL is set but not used" in err
