"""JiuwenMemory's dreaming schedules and scope config store over real HTTP: schedules are
database rows that survive a restart and run as ``dream_sweep`` jobs (enqueued once per due
run, however many processes schedule), a sweep says what it did or why it could not, and a
bound key only reaches its own tenant."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from omoide import Memory
from omoide.embed.protocol import Embedder
from omoide.engine.consolidation.dreaming import NO_LLM
from omoide.jobs.kinds import DREAM_SWEEP
from omoide.types import MemoryType, Scope
from tests.api.conftest import KEY, Running, running
from tests.compat.conftest import StartServer
from tests.fakes import FakeLLMServer

BOUND_S = 60  # a generous bound on a condition, never a delay
TENANT = {"user_id": "u", "scope_id": "s"}


@pytest.fixture(autouse=True)
def no_floor(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    """These tests sweep every fraction of a second: no floor on the interval (the servers'
    ``Memory`` reads it when built), but for the test of the floor itself."""
    if request.node.name != "test_an_interval_under_the_floor_sweeps_at_the_floor":
        monkeypatch.setenv("OMOIDE_DREAMING_MIN_INTERVAL_S", "0")


def until(condition: Callable[[], Any], what: str) -> Any:
    deadline = time.monotonic() + BOUND_S
    while not (value := condition()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)
    return value


def _ok(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    return response.json()


def _status(http: httpx.Client, **query: str) -> list[dict[str, Any]]:
    return _ok(http.get("/dreaming/status", params=query))["orchestrators"]  # type: ignore[no-any-return]


def _rounds(http: httpx.Client, session: str, rounds: int, **tenant: str) -> None:
    for n in range(rounds):
        turns = [
            {"role": "user", "content": f"{session} says {n}"},
            {"role": "assistant", "content": "ok"},
        ]
        _ok(
            http.post(
                "/add_messages/",
                json={"messages": turns, "session_id": session, **(tenant or TENANT)},
            )
        )


def _swept(http: httpx.Client, after: int = 0, **query: str) -> dict[str, Any]:
    """The first schedule's last sweep once its job is done (and it has made > ``after``)."""

    def done() -> dict[str, Any] | None:
        [entry] = _status(http, **query)
        sweep = entry["last_sweep"]
        ready = entry["sweeps"] > after and sweep and sweep["state"] == "done"
        return entry if ready else None

    return until(done, "a finished sweep")  # type: ignore[no-any-return]


def test_start_status_stop(http: httpx.Client) -> None:
    assert _status(http) == []
    started = _ok(http.post("/start_dreaming", json={**TENANT, "interval_seconds": 3600}))
    assert started == {"started": True, "scope_id": "s", "user_id": "u"}
    [entry] = _status(http)
    assert (entry["user_id"], entry["scope_id"], entry["running"]) == ("u", "s", True)
    assert entry["interval_seconds"] == 3600 and entry["last_scan_ts"] is None
    assert entry["settings"] == {
        "min_session_rounds": 4,
        "max_sessions_per_sweep": 10,
        "max_compress_tokens": 30000,
        "max_items_per_session": 5,
    }
    assert entry["next_run_ts"] is not None and entry["last_sweep"] is None
    stopped = _ok(http.post("/stop_dreaming", json={"user_id": "u"}))
    assert stopped == {"success": True, "scope_id": None, "user_id": "u"}
    assert _status(http)[0]["running"] is False
    off = _ok(http.post("/start_dreaming", json={**TENANT, "enabled": False}))
    assert off["started"] is False and _status(http)[0]["running"] is False


def test_start_dreaming_validation(http: httpx.Client) -> None:
    for body in (
        {"scope_id": "s"},
        {**TENANT, "interval_seconds": 0},
        {**TENANT, "min_session_rounds": 0},
        {**TENANT, "max_compress_tokens": "many"},
    ):
        bad = http.post("/start_dreaming", json=body)
        assert bad.status_code == 422 and isinstance(bad.json()["detail"], list), body
    assert _status(http) == []


def test_a_sweep_runs_as_a_job_and_says_why_nothing_was_consolidated(
    server: Running, http: httpx.Client
) -> None:
    _rounds(http, "long", 4)
    _rounds(http, "short", 2)
    body = {**TENANT, "interval_seconds": 0.2, "max_sessions_per_sweep": 5}
    _ok(http.post("/start_dreaming", json=body))
    entry = _swept(http)
    report = entry["last_sweep"]["report"]
    assert report["mode"] == "dry_run" and report["reason"] == NO_LLM
    assert [s["session_id"] for s in report["sessions"]] == ["long"]  # 2 rounds are too few
    assert report["sessions"][0]["episodes"] == 4 and report["sessions"][0]["summary_id"] is None
    assert entry["scanned_sessions_count"] == 2 and entry["last_promoted_count"] == 0
    assert entry["last_scan_ts"] is not None
    job = server.engine.store.jobs.get_job(int(entry["last_sweep"]["task_id"]))
    assert (job.kind, job.user_id, job.scope_id) == (DREAM_SWEEP.name, "u", "s")
    assert server.engine.get_all(user_id="u", scope_id="s").total == 12  # nothing changed


def test_a_schedule_survives_a_restart_and_runs_after_it(
    tmp_path: Path, embedder: Embedder
) -> None:
    db = tmp_path / "dreaming.db"
    body = {"user_id": "v", "scope_id": "s", "interval_seconds": 0.3}
    first = running(db, embedder, engine=Memory(db, embedder=embedder, workers=1))
    with first as server, server.http() as http:
        _ok(http.post("/start_dreaming", json={**TENANT, "interval_seconds": 3600}))
        _ok(http.post("/start_dreaming", json={**body, "enabled": False}))
        before = _status(http)
    second = running(db, embedder, engine=Memory(db, embedder=embedder, workers=1))
    with second as server, server.http() as http:
        assert _status(http) == before
        _ok(http.post("/start_dreaming", json=body))
        entry = _swept(http, user_id="v")
        assert entry["last_sweep"]["report"]["scanned_sessions"] == 0
        assert _status(http, user_id="u")[0]["next_run_ts"] == before[0]["next_run_ts"]


def test_several_schedulers_enqueue_each_due_sweep_once(tmp_path: Path, embedder: Embedder) -> None:
    """Two servers (each with its worker and scheduler) on one database file: every claim of
    the schedule enqueued exactly one sweep job."""
    db = tmp_path / "shared.db"
    first = Memory(db, embedder=embedder, workers=1)
    second = Memory(db, embedder=embedder, workers=1)
    with running(db, embedder, engine=first) as a, running(db, embedder, engine=second) as b:
        with a.http() as http:
            _ok(http.post("/start_dreaming", json={**TENANT, "interval_seconds": 0.05}))
            until(lambda: _status(http)[0]["sweeps"] >= 6, "six sweeps")
            _ok(http.post("/stop_dreaming", json={}))
        with b.http() as other:
            [entry] = _status(other)
        jobs = first.store.jobs.list_jobs(Scope(user_id="u", scope_id="s"), None, 1000, 0)
        sweeps = [j for j in jobs if j.kind == DREAM_SWEEP.name]
        assert entry["running"] is False and len(sweeps) == entry["sweeps"]


def test_scope_config_store(http: httpx.Client) -> None:
    config = {"user_profile_definition": "用户本人的表述", "extract_assistant_memory": True}
    assert _ok(http.post("/get_scope_config", json={"scope_id": "s"})) == {"config": None}
    assert _ok(http.post("/set_scope_config", json={"scope_id": "s", "config": config})) == {
        "success": True
    }
    assert _ok(http.post("/get_scope_config", json={"scope_id": "s"})) == {"config": config}
    other = http.post("/get_scope_config", json={"scope_id": "s", "user_id": "someone"})
    assert _ok(other) == {"config": None}
    assert _ok(http.post("/delete_scope_config", json={"scope_id": "s"})) == {"success": True}
    assert _ok(http.post("/delete_scope_config", json={"scope_id": "s"})) == {"success": False}
    assert http.post("/set_scope_config", json={"scope_id": "s", "config": [1]}).status_code == 422
    assert http.post("/get_scope_config", json={}).status_code == 422


def test_a_bound_key_only_reaches_its_own_tenant(start_server: StartServer) -> None:
    server = start_server(api_key=KEY, tenant_keys={"bob-key": {"user_id": "bob"}})
    with server.http(KEY) as admin, server.http("bob-key") as bob:
        _ok(admin.post("/start_dreaming", json={**TENANT, "interval_seconds": 3600}))
        _ok(
            admin.post(
                "/set_scope_config", json={"scope_id": "s", "user_id": "u", "config": {"a": 1}}
            )
        )
        assert bob.post("/start_dreaming", json=TENANT).status_code == 403
        assert bob.post("/stop_dreaming", json={"user_id": "u"}).status_code == 403
        assert (
            _status(bob) == []
            and bob.get("/dreaming/status", params={"user_id": "u"}).status_code == 403
        )
        _ok(bob.post("/stop_dreaming", json={}))  # stops bob's own (none), not u's
        assert _status(admin)[0]["running"] is True
        _ok(bob.post("/start_dreaming", json={"user_id": "bob", "scope_id": "s"}))
        assert [e["user_id"] for e in _status(bob)] == ["bob"]
        assert len(_status(admin)) == 2
        assert _ok(bob.post("/get_scope_config", json={"scope_id": "s"})) == {"config": None}
        assert (
            bob.post("/get_scope_config", json={"scope_id": "s", "user_id": "u"}).status_code == 403
        )
        assert httpx.post(f"{server.url}/start_dreaming", json=TENANT).status_code == 401


def test_with_an_llm_a_sweep_consolidates(
    start_server: StartServer, fake_llm: FakeLLMServer
) -> None:
    server = start_server(llm=fake_llm)
    for n in range(4):
        turns = [{"role": "user", "content": f"story {n}"}, {"role": "assistant", "content": "ok"}]
        server.engine.add(turns, user_id="u", scope_id="s", session_id="chat", infer=False)
    fake_llm.enqueue(json.dumps({"summary": "Four stories were told."}))
    with server.http() as http:
        _ok(http.post("/start_dreaming", json={**TENANT, "interval_seconds": 0.2}))
        entry = _swept(http)
        _ok(http.post("/stop_dreaming", json={}))
    report = entry["last_sweep"]["report"]
    assert report["mode"] == "run" and report["reason"] is None and report["promoted"] == 1
    [session] = report["sessions"]
    summary = server.engine.get(session["summary_id"], user_id="u", scope_id="s")
    assert summary.type is MemoryType.SUMMARY and summary.text == "Four stories were told."


def test_root_lists_the_new_routes(http: httpx.Client) -> None:
    listed = set(_ok(http.get("/"))["endpoints"])
    assert {
        "POST /set_scope_config",
        "POST /get_scope_config",
        "POST /delete_scope_config",
        "POST /start_dreaming",
        "POST /stop_dreaming",
        "GET /dreaming/status",
        "POST /admin/mem_meta/refresh",
        "POST /admin/mem_meta/expired_memorys",
        "POST /admin/mem_meta/batch_delete",
        "GET /admin/mem_meta/task_status",
    } <= listed


def test_an_interval_under_the_floor_sweeps_at_the_floor(http: httpx.Client) -> None:
    """A schedule asked to sweep every millisecond would enqueue a job after every sweep: it
    sweeps every OMOIDE_DREAMING_MIN_INTERVAL_S (60 s by default), and the reply says so."""
    before = time.time()
    reply = http.post("/start_dreaming", json={**TENANT, "interval_seconds": 0.001})
    assert reply.status_code == 200 and reply.json()["started"] is True
    assert "under this server's minimum: sweeps every 60 s" in reply.headers["X-Omoide-Warning"]
    [entry] = _status(http)
    assert entry["interval_seconds"] == 60
    next_run = datetime.fromisoformat(entry["next_run_ts"]).timestamp()
    assert next_run >= before + 60
    ok = http.post("/start_dreaming", json={**TENANT, "interval_seconds": 3600})
    assert "X-Omoide-Warning" not in ok.headers
