"""JiuwenMemory's expired-memory maintenance (``/admin/mem_meta``) over real HTTP: memories
unused for the threshold are counted and deleted by durable jobs whose progress
``task_status`` reports; a dry run deletes nothing; bound keys stay inside their tenant."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx

from omoide.types import MemoryType, now_ms
from tests.api.conftest import KEY, Running
from tests.compat.conftest import StartServer
from tests.mcp.conftest import data, http_client, run

BOUND_S = 60  # a generous bound on a condition, never a delay
DAY_MS = 86_400_000
META = "/admin/mem_meta"


def until(condition: Callable[[], Any], what: str) -> Any:
    deadline = time.monotonic() + BOUND_S
    while not (value := condition()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)
    return value


def _facts(server: Running, user: str, scope: str, *texts: str) -> list[str]:
    messages = [{"role": "user", "content": t} for t in texts]
    items = server.engine.add(
        messages, user_id=user, scope_id=scope, type=MemoryType.SEMANTIC, infer=False
    )
    return [i.id for i in items]


def _age(server: Running, ids: list[str], days: int) -> None:
    """Make these memories last used ``days`` ago (no port moves time; the file can)."""
    then = now_ms() - days * DAY_MS
    marks = ",".join("?" * len(ids))
    server.engine.store._writer.execute(  # type: ignore[attr-defined]
        f"UPDATE memories SET updated_at = ?, created_at = ? WHERE id IN ({marks})",
        (then, then, *ids),
    )


def _ids(server: Running, user: str, scope: str) -> set[str]:
    return {m.id for m in server.engine.get_all(user_id=user, scope_id=scope).items}


def _done(http: httpx.Client, task_id: str) -> dict[str, Any]:
    def finished() -> dict[str, Any] | None:
        task = http.get(f"{META}/task_status", params={"task_id": task_id}).json()["task"]
        return task if task["status"] in ("completed", "failed") else None

    return until(finished, f"task {task_id}")  # type: ignore[no-any-return]


def _world(server: Running) -> dict[str, list[str]]:
    """alice: 2 stale of 3 in s1, 1 stale in s2; bob: 1 stale of 2; carol: nothing stale."""
    w = {
        "alice_s1": _facts(server, "alice", "s1", "a1", "a2", "a3"),
        "alice_s2": _facts(server, "alice", "s2", "a4"),
        "bob": _facts(server, "bob", "s1", "b1", "b2"),
        "carol": _facts(server, "carol", "s1", "c1"),
    }
    _age(server, [*w["alice_s1"][:2], *w["alice_s2"], w["bob"][0]], 40)
    return w


def test_expired_memorys_counts_unused_memories_per_user(
    server: Running, http: httpx.Client
) -> None:
    _world(server)
    reply = http.post(f"{META}/expired_memorys", json={}).json()
    assert reply["status"] == "success" and reply["inactive_days_threshold"] == 30
    assert (reply["total_users"], reply["total_expired_30d"], reply["users_with_expired"]) == (
        3,
        4,
        2,
    )
    top = reply["top_users"]
    assert [(u["scope_user"], u["expired_30d_count"], u["total_count"]) for u in top] == [
        ("alice", 3, 4),
        ("bob", 1, 2),
        ("carol", 0, 1),
    ]
    assert top[0]["active_count"] == 1
    picky = http.post(f"{META}/expired_memorys", json={"min_expired_count": 2, "limit": 1})
    assert [u["scope_user"] for u in picky.json()["top_users"]] == ["alice"]
    older = http.post(f"{META}/expired_memorys", json={"inactive_days_threshold": 60}).json()
    assert older["total_expired_30d"] == 0


def test_a_search_hit_counts_as_a_use(server: Running, http: httpx.Client) -> None:
    [tea] = _facts(server, "u", "s", "I like jasmine tea")
    _age(server, [tea], 40)
    hits = http.post(
        "/search_memory/", json={"query": "jasmine tea", "user_id": "u", "scope_id": "s"}
    ).json()["results"]
    assert [h["mem_id"] for h in hits] == [tea]
    assert http.post(f"{META}/expired_memorys", json={}).json()["total_expired_30d"] == 0


def test_an_mcp_search_hit_counts_as_a_use(server: Running, http: httpx.Client) -> None:
    """JiuwenMemory's MCP search tools are its REST searches' twins (upstream's both call
    ``search_user_mem``): a memory an agent keeps finding through MCP is in use, not expired."""
    [tea] = _facts(server, "u", "s", "I like jasmine tea")
    summary = server.engine.add(
        "They talked about jasmine tea", type=MemoryType.SUMMARY, user_id="u", scope_id="s"
    )[0].id
    _age(server, [tea, summary], 40)
    assert http.post(f"{META}/expired_memorys", json={}).json()["total_expired_30d"] == 2

    async def script() -> list[list[str]]:
        found = []
        async with http_client(server.url) as client:
            for tool in ("search_memories", "search_history_summaries"):
                args = {"query": "jasmine tea", "user_id": "u", "scope_id": "s", "threshold": 0}
                found.append(
                    [h["mem_id"] for h in data(await client.call_tool(tool, args))["results"]]
                )
        return found

    assert run(script) == [[tea], [summary]]
    assert http.post(f"{META}/expired_memorys", json={}).json()["total_expired_30d"] == 0


def test_validation_follows_upstream(http: httpx.Client) -> None:
    for body in ({"inactive_days_threshold": 0}, {"limit": 101}, {"min_expired_count": -1}):
        bad = http.post(f"{META}/expired_memorys", json=body)
        assert bad.status_code == 422 and isinstance(bad.json()["detail"], list), body
    assert http.post(f"{META}/refresh", json={"forse": True}).status_code == 422  # forbidden
    neither = http.post(f"{META}/batch_delete", json={"dry_run": True})
    assert neither.status_code == 422 and "all_expired" in neither.json()["detail"]
    assert http.post(f"{META}/batch_delete", json={"user_ids": []}).status_code == 422
    assert (
        http.post(f"{META}/batch_delete", json={"inactive_days_threshold": 400}).status_code == 422
    )


def test_task_status_404_and_the_newest(http: httpx.Client) -> None:
    for task_id in ("999999", "not-a-number", "1"):
        missing = http.get(f"{META}/task_status", params={"task_id": task_id})
        assert missing.status_code == 404 and task_id in missing.json()["detail"]
    assert http.get(f"{META}/task_status").json() == {
        "status": "success",
        "task": None,
        "message": "no task yet",
    }


def test_an_unknown_task_is_named_in_upstreams_words_too(http: httpx.Client) -> None:
    """Upstream's 404 detail is its manager's Chinese message (its own test looks for 不存在,
    "does not exist"); a client showing or matching it finds the same words here."""
    missing = http.get(f"{META}/task_status", params={"task_id": "nonexistent"})
    assert missing.status_code == 404
    assert "任务 nonexistent 不存在" in missing.json()["detail"]


def test_refresh_is_a_job_then_skipped_in_its_cooldown(server: Running, http: httpx.Client) -> None:
    _world(server)
    accepted = http.post(f"{META}/refresh", json={})
    assert accepted.status_code == 202, accepted.text
    body = accepted.json()
    assert (body["status"], body["task_type"]) == ("accepted", "refresh_meta")
    task = _done(http, body["task_id"])
    assert task["status"] == "completed" and task["processed_users"] == 1
    assert '"expired": 4' in task["result_summary"] and '"total_users": 3' in task["result_summary"]
    skipped = http.post(f"{META}/refresh", json={})
    assert skipped.status_code == 200 and skipped.json()["status"] == "skipped"
    assert skipped.json()["task_id"] == body["task_id"]
    assert http.post(f"{META}/refresh", json={"force": True}).status_code == 202
    listed = http.post(f"{META}/expired_memorys", json={}).json()
    assert listed["task_id"] is not None and listed["task_status"] in (
        "pending",
        "running",
        "completed",
    )


def test_dry_run_reports_and_deletes_nothing(server: Running, http: httpx.Client) -> None:
    w = _world(server)
    before = {u: _ids(server, u, "s1") for u in ("alice", "bob", "carol")}
    reply = http.post(f"{META}/batch_delete", json={"all_expired": True, "dry_run": True})
    assert reply.status_code == 202, reply.text
    assert reply.json()["total_users"] == 2
    task = _done(http, reply.json()["task_id"])
    assert task["status"] == "completed" and task["deleted_count"] == 0
    assert (task["processed_users"], task["total_users"]) == (2, 2)
    assert '"dry_run": true' in task["result_summary"]
    assert '"would_delete": 3' in task["result_summary"]  # alice's s1 and s2
    assert {u: _ids(server, u, "s1") for u in before} == before
    assert _ids(server, "alice", "s2") == set(w["alice_s2"])


def test_batch_delete_deletes_the_expired_of_the_users_named(
    server: Running, http: httpx.Client
) -> None:
    w = _world(server)
    reply = http.post(f"{META}/batch_delete", json={"user_ids": ["alice", "carol"]})
    assert reply.status_code == 202 and reply.json()["total_users"] == 1  # carol has none
    task = _done(http, reply.json()["task_id"])
    assert (task["status"], task["deleted_count"], task["processed_users"]) == ("completed", 3, 1)
    assert _ids(server, "alice", "s1") == {w["alice_s1"][2]}
    assert _ids(server, "alice", "s2") == set()
    assert _ids(server, "bob", "s1") == set(w["bob"])  # not named
    history = server.engine.history(w["alice_s2"][0], user_id="alice", scope_id="s2")
    assert history[-1].event.value == "DELETE"
    again = http.post(f"{META}/batch_delete", json={"user_ids": ["alice"]})
    assert again.status_code == 200 and again.json()["total_users"] == 0  # nothing left
    skipped = http.post(f"{META}/batch_delete", json={"user_ids": ["bob"]})
    assert skipped.status_code == 200 and skipped.json()["status"] == "skipped"  # cooldown
    forced = http.post(f"{META}/batch_delete", json={"user_ids": ["bob"], "force": True})
    assert forced.status_code == 202
    assert _done(http, forced.json()["task_id"])["deleted_count"] == 1


def test_batch_delete_limited_to_a_scope(server: Running, http: httpx.Client) -> None:
    w = _world(server)
    reply = http.post(f"{META}/batch_delete", json={"all_expired": True, "scope_id": "s2"})
    assert _done(http, reply.json()["task_id"])["deleted_count"] == 1
    assert _ids(server, "alice", "s1") == set(w["alice_s1"])
    assert _ids(server, "alice", "s2") == set()


def test_task_status_reports_progress_of_a_task_in_flight(start_server: StartServer) -> None:
    """With no worker in the server, the task waits: pending with 0 of N users done; the
    worker (run here) then completes it."""
    server = start_server(workers=0)
    with server.http() as http:
        _world(server)
        reply = http.post(f"{META}/batch_delete", json={"all_expired": True})
        task_id = reply.json()["task_id"]
        task = http.get(f"{META}/task_status", params={"task_id": task_id}).json()["task"]
        assert (task["status"], task["processed_users"], task["total_users"]) == ("pending", 0, 2)
        assert task["started_at"] is None and task["finished_at"] is None
        assert http.get(f"{META}/task_status").json()["task"]["task_id"] == task_id  # newest
        server.engine.engine.run_jobs()
        task = http.get(f"{META}/task_status", params={"task_id": task_id}).json()["task"]
        assert (task["status"], task["processed_users"], task["deleted_count"]) == (
            "completed",
            2,
            4,
        )
        assert task["finished_at"] is not None


def test_a_bound_key_only_reaches_its_own_tenant(start_server: StartServer) -> None:
    server = start_server(api_key=KEY, tenant_keys={"alice-key": {"user_id": "alice"}})
    w = _world(server)
    with server.http("alice-key") as alice, server.http(KEY) as admin:
        counted = alice.post(f"{META}/expired_memorys", json={}).json()
        assert [u["scope_user"] for u in counted["top_users"]] == ["alice"]
        assert counted["total_users"] == 1
        assert alice.post(f"{META}/batch_delete", json={"user_ids": ["bob"]}).status_code == 403
        mine = alice.post(f"{META}/batch_delete", json={"all_expired": True})
        assert mine.status_code == 202 and mine.json()["total_users"] == 1
        assert _done(alice, mine.json()["task_id"])["deleted_count"] == 3
        assert _ids(server, "bob", "s1") == set(w["bob"])  # all_expired: the bound tenant only
        theirs = admin.post(f"{META}/batch_delete", json={"user_ids": ["bob"], "dry_run": True})
        hidden = alice.get(f"{META}/task_status", params={"task_id": theirs.json()["task_id"]})
        assert hidden.status_code == 404
        assert (
            admin.get(f"{META}/task_status", params={"task_id": mine.json()["task_id"]}).status_code
            == 200
        )
        refresh = alice.post(f"{META}/refresh", json={})
        assert refresh.status_code == 202  # the admin's tasks do not put alice in a cooldown
        unauthenticated = httpx.get(f"{server.url}{META}/task_status")
        assert unauthenticated.status_code == 401
