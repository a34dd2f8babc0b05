"""An attack pass over the routes that landed on 2026-12-01, over real HTTP: tenant-bound keys
on JiuwenMemory's ``/admin/mem_meta`` and dreaming routes and on ``/v1/memories/{id}`` without
a tenant; bad input on them; and ids that try to leave the markdown mirror's directory."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import httpx
import pytest

from omoide import Memory
from omoide.embed.protocol import Embedder
from omoide.engine.consolidation.dreaming import DreamingService
from omoide.engine.shared.job_signal import JobSignal
from omoide.types import Scope, now_ms
from tests.api.conftest import KEY, Running, running
from tests.compat.conftest import StartServer
from tests.compat.test_jiuwen_meta import DAY_MS, _done, _facts, until
from tests.mirror.conftest import open_memory
from tests.sql import execute

META = "/admin/mem_meta"
KEYS = {
    "alice-key": {"user_id": "alice"},
    # JiuwenMemory's default scope: also the scope a user-wide key's tasks are filed under
    "alice-default-key": {"user_id": "alice", "scope_id": "__default__"},
    "bob-demo-key": {"user_id": "bob", "scope_id": "demo"},
}


def _age(server: Running, ids: list[str], days: int) -> None:
    """Make these memories last used ``days`` ago, on either backend (no port moves time)."""
    then = now_ms() - days * DAY_MS
    marks = ",".join("?" * len(ids))
    statement = f"UPDATE memories SET updated_at = ?, created_at = ? WHERE id IN ({marks})"
    execute(server.engine.engine.store, statement, (then, then, *ids))


@pytest.fixture
def server(start_server: StartServer) -> Running:
    return start_server(api_key=KEY, tenant_keys=KEYS)


def _shape(reply: httpx.Response) -> tuple[int, Any]:
    """A reply with what names the request itself (the id asked for, the request id) left out."""
    body = reply.json() if reply.content else None
    if isinstance(body, dict):
        body = {k: v for k, v in body.items() if k != "request_id"}
        body = {k: v for k, v in body.items() if k not in ("detail", "error")} | {
            "code": body.get("error", {}).get("code")
        }
    return reply.status_code, body


def test_another_tenants_memory_id_answers_like_no_id(server: Running) -> None:
    with server.http(KEY) as admin, server.http("alice-key") as alice:
        added = admin.post("/v1/memories", json={"text": "Bob's pin", "user_id": "bob"})
        bobs = added.json()["items"][0]["id"]
        gone = admin.post("/v1/memories", json={"text": "Carol's", "user_id": "carol"})
        carols = gone.json()["items"][0]["id"]
        assert admin.delete(f"/v1/memories/{carols}").status_code == 204
        nobody = "0" * len(bobs)
        for other in (bobs, carols):  # a live and a deleted one (whose history remains)
            for method, path, kwargs in (
                ("GET", "", {}),
                ("GET", "/history", {}),
                ("PATCH", "", {"json": {"text": "owned"}}),
                ("DELETE", "", {}),
            ):
                theirs = alice.request(method, f"/v1/memories/{other}{path}", **kwargs)
                none = alice.request(method, f"/v1/memories/{nobody}{path}", **kwargs)
                assert _shape(theirs) == _shape(none) == (404, {"code": "not_found"})
                assert theirs.json()["detail"].replace(other, nobody) == none.json()["detail"]
        assert admin.get(f"/v1/memories/{bobs}").json()["text"] == "Bob's pin"


@pytest.mark.parametrize("task_id", ["²", "\u0661", "\uff11", "-1", "1e3", " 1", "9" * 19])
def test_a_task_id_that_is_not_ascii_digits_is_not_found(server: Running, task_id: str) -> None:
    """'²'.isdigit() is true and int('²') raises: that was a 500 with Python's message."""
    with server.http("alice-key") as alice:
        reply = alice.get(f"{META}/task_status", params={"task_id": task_id})
        assert reply.status_code == 404, reply.text
        # omoide's words, then upstream's (its own test matches them)
        assert reply.json()["detail"] == f"task {task_id} not found (任务 {task_id} 不存在)"


def test_all_expired_naming_another_tenants_user_is_forbidden(server: Running) -> None:
    """``user_ids`` beside ``all_expired`` was not checked (all_expired wins); naming another
    tenant's user is a 403 either way, and deletes nothing."""
    bobs = _facts(server, "bob", "demo", "b1")
    _age(server, bobs, 40)
    with server.http("alice-key") as alice:
        for body in (
            {"all_expired": True, "user_ids": ["bob"]},
            {"all_expired": True, "user_ids": ["alice", "bob"], "dry_run": True},
        ):
            reply = alice.post(f"{META}/batch_delete", json=body)
            assert reply.status_code == 403, reply.text
    assert [m.id for m in server.engine.get_all(user_id="bob", scope_id="demo").items] == bobs


def test_a_scope_bound_key_sees_no_task_of_its_users_other_scopes(server: Running) -> None:
    """A user-wide key's tasks were filed under (user, "__default__"); a key bound to that scope
    saw them (task_status, /v1/jobs): their counts and payload name the user's other scopes,
    and they put it in a cooldown."""
    _age(server, _facts(server, "alice", "work", "w1", "w2"), 40)
    with server.http("alice-key") as alice, server.http("alice-default-key") as scoped:
        wide = alice.post(f"{META}/batch_delete", json={"all_expired": True, "dry_run": True})
        assert wide.status_code == 202, wide.text
        task_id = wide.json()["task_id"]
        assert _done(alice, task_id)["request_params"]
        hidden = scoped.get(f"{META}/task_status", params={"task_id": task_id})
        assert hidden.status_code == 404
        assert hidden.json()["detail"] == f"task {task_id} not found (任务 {task_id} 不存在)"
        assert scoped.get(f"{META}/task_status").json()["task"] is None
        assert scoped.get("/v1/jobs").json()["items"] == []  # nor in its job list
        refreshed = alice.post(f"{META}/refresh", json={})
        assert refreshed.status_code == 202
        _done(alice, refreshed.json()["task_id"])
        counted = scoped.post(f"{META}/expired_memorys", json={}).json()
        assert (counted["task_id"], counted["total_users"], counted["top_users"]) == (None, 0, [])
        own = scoped.post(f"{META}/refresh", json={})  # not in the user-wide task's cooldown
        assert own.status_code == 202, own.text
        # the user-wide key reaches the scope, so it sees the scoped key's task
        own_id = own.json()["task_id"]
        assert alice.get(f"{META}/task_status", params={"task_id": own_id}).status_code == 200


def test_mem_meta_and_dreaming_keep_a_bound_key_in_its_tenant(server: Running) -> None:
    _age(server, _facts(server, "carol", "s", "c1"), 40)
    with server.http(KEY) as admin, server.http("bob-demo-key") as bob:
        theirs = admin.post(f"{META}/batch_delete", json={"user_ids": ["carol"], "dry_run": True})
        assert theirs.status_code == 202
        counted = bob.post(f"{META}/expired_memorys", json={}).json()
        assert (counted["total_users"], counted["total_expired_30d"]) == (0, 0)
        assert bob.get(f"{META}/task_status").json()["task"] is None
        for body in ({"user_ids": ["bob"], "scope_id": "home"}, {"user_ids": ["carol"]}):
            assert bob.post(f"{META}/batch_delete", json=body).status_code == 403
        mine = {"user_id": "bob", "scope_id": "demo", "enabled": False}
        assert bob.post("/start_dreaming", json=mine).status_code == 200
        assert bob.post("/stop_dreaming", json={"scope_id": "home"}).status_code == 403
        assert bob.get("/dreaming/status", params={"scope_id": "home"}).status_code == 403
        config = {"scope_id": "home", "config": {"a": 1}}
        assert bob.post("/set_scope_config", json=config).status_code == 403


@pytest.mark.parametrize(
    ("path", "body", "message"),
    [
        (f"{META}/expired_memorys", {"limit": 0}, "greater than or equal to 1"),
        (f"{META}/expired_memorys", {"limit": 101}, "less than or equal to 100"),
        (f"{META}/expired_memorys", {"inactive_days_threshold": 0}, "greater than or equal"),
        (f"{META}/expired_memorys", {"min_expired_count": 10**30}, "integer out of range"),
        (f"{META}/batch_delete", {"all_expired": True, "inactive_days_threshold": 366}, "less"),
        ("/start_dreaming", {"interval_seconds": 0}, "greater than 0"),
        ("/start_dreaming", {"interval_seconds": 1e12}, "less than or equal"),
        ("/start_dreaming", {"min_session_rounds": 0}, "greater than or equal to 1"),
        ("/start_dreaming", {"max_compress_tokens": 10**30}, "integer out of range"),
        ("/set_scope_config", {"config": [1]}, "valid dictionary"),
        ("/set_scope_config", {"config": "x"}, "valid dictionary"),
    ],
)
def test_bad_numbers_and_configs_are_422(
    server: Running, path: str, body: dict[str, Any], message: str
) -> None:
    with server.http(KEY) as admin:
        reply = admin.post(path, json={"user_id": "u", "scope_id": "s", **body})
        assert reply.status_code == 422, reply.text
        assert message in reply.text


@pytest.mark.parametrize(
    ("raw", "status", "message"),
    [
        (b'{"scope_id":"s","config":' + b'{"a":' * 3000 + b"1" + b"}" * 3001, 422, "nested"),
        (b'{"scope_id":"s","config":{"a":"\\ud800"}}', 422, "lone surrogate"),
        (b'{"scope_id":"s\\udfff","config":{}}', 422, "lone surrogate"),
        (b'{"scope_id":"s","config":{"a\\u0000":1}}', 422, "NUL"),
        (b'{"scope_id":"s","config":{"a":"' + b"x" * 70_000 + b'"}}', 413, "OMOIDE_MAX_BODY"),
    ],
)
def test_hostile_scope_configs_are_refused(
    server: Running, raw: bytes, status: int, message: str
) -> None:
    with server.http(KEY) as admin:
        headers = {"content-type": "application/json"}
        reply = admin.post("/set_scope_config", content=raw, headers=headers)
        assert reply.status_code == status, reply.text
        assert message in reply.text
        assert admin.post("/get_scope_config", json={"scope_id": "s"}).json() == {"config": None}


HOSTILE_IDS = ["..", ".", "../../outside", "/abs", "a/../../b", "a\\..\\b", "%2e%2e", "CON"]


def test_no_id_writes_outside_the_mirror_root(tmp_path: Path, embedder: Embedder) -> None:
    db, root = tmp_path / "omoide.db", tmp_path / "data"
    with running(db, embedder, engine=open_memory(db, root, embedder)) as server:
        with server.http() as http:
            for hostile in HOSTILE_IDS:
                tenant = {"user_id": hostile, "scope_id": hostile}
                body = {"text": f"fact of {hostile}", "type": "semantic", "infer": False}
                assert http.post("/v1/memories", json=body | tenant).status_code == 201
        mirror = server.engine.engine.services.mirror
        assert mirror is not None
        for hostile in HOSTILE_IDS:  # each tenant has its own file, one level each
            scope = Scope(user_id=hostile, scope_id=hostile)
            where = mirror.tenant_dir(scope)
            assert where.parent.parent == root / "memories"
            assert mirror.scope_of(where / "semantic_memory.md") == scope
            assert f"fact of {hostile}" in (where / "semantic_memory.md").read_text("utf-8")
    written = {Path(d) / f for d, _, files in os.walk(tmp_path) for f in files}
    assert all(root in p.parents or p.name.startswith("omoide.db") for p in written), written


def test_a_short_interval_never_queues_a_sweep_behind_an_unfinished_one(
    start_server: StartServer, tmp_path: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """interval_seconds=0.001 is valid; each scheduler poll enqueued another sweep whether or
    not the last had run, so a bound key could grow the job queue without bound. (Without the
    interval's floor, OMOIDE_DREAMING_MIN_INTERVAL_S, which would hide it.)"""
    monkeypatch.setenv("OMOIDE_DREAMING_MIN_INTERVAL_S", "0")
    engine = Memory(tmp_path / "idle.db", embedder=embedder, workers=0)  # no scheduler thread
    server = start_server(api_key=KEY, tenant_keys=KEYS, engine=engine)
    store, services = server.engine.engine.store, server.engine.engine.services
    # the server's scheduler, but with no worker woken: its sweeps stay pending
    dreaming = DreamingService(
        store.sessions,
        store.jobs,
        store.consolidation,
        store.schedules,
        store,
        services.consolidation,
        None,
        JobSignal(store.jobs),
    )
    with server.http("bob-demo-key") as bob:
        body = {"user_id": "bob", "scope_id": "demo", "interval_seconds": 0.001}
        assert bob.post("/start_dreaming", json=body).status_code == 200
        until(lambda: dreaming.enqueue_due() == 1, "the first sweep")
        [first] = bob.get("/dreaming/status").json()["orchestrators"]
        assert first["last_sweep"]["state"] == "pending"
        for _ in range(3):  # due again, its sweep still pending
            until(lambda: (store.schedules.next_due() or 0) <= now_ms(), "the next due time")
            assert dreaming.enqueue_due() == 0
        [entry] = bob.get("/dreaming/status").json()["orchestrators"]
        assert entry["last_sweep"] == first["last_sweep"]
