"""JiuwenMemory's expired-memory maintenance (upstream ``server/mem_meta_api.py``) over
omoide's access tracking, under ``/admin/mem_meta``:

    POST /refresh          202 accepted (a count job) or 200 skipped   ExpiryService.refresh
    POST /expired_memorys  200: the users with the most expired memories  ExpiryService.by_user
    POST /batch_delete     202 accepted (a delete job), 200 skipped / nothing to delete,
                           422 without user_ids or all_expired        ExpiryService.delete
    GET  /task_status      200 (a task, or the newest), 404 unknown   ExpiryService.progress

Expired, here: not used (no access recorded, no change) for ``inactive_days_threshold`` days;
upstream's are superseded memories that old. ``all_expired`` takes every user with expired
memories at that threshold (upstream ignores the threshold then: all superseded ones). A task is
a durable job; its id is the job's id. A tenant-bound key counts, deletes and sees only its own
tenant (its ``all_expired`` is its tenant; another user in ``user_ids`` is a 403).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from omoide.api.deps import MemoryDep, Tenancy, TenancyDep
from omoide.compat.jiuwen.common import JiuwenRoute, failing_as, native, resolve_scope
from omoide.errors import InvalidInput, NotFound
from omoide.jobs.kinds import EXPIRY_DELETE
from omoide.memory import ADMIN, USER_TASKS, ExpiryProgress, Owner, Submitted
from omoide.types import Job, JobState, Scope

router = APIRouter(prefix="/admin/mem_meta", tags=["jiuwen"], route_class=JiuwenRoute)

TASK_TYPES = {"expiry_refresh": "refresh_meta", "expiry_delete": "batch_delete"}
STATES = {
    JobState.PENDING: "pending",
    JobState.RUNNING: "running",
    JobState.DONE: "completed",
    JobState.FAILED: "failed",
}
Days = Field(30, ge=1, le=365)


class RefreshRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"force": False}]})

    force: bool = Field(False, description="Even if one is running or ran in the last 5 min.")


class ExpiredRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"inactive_days_threshold": 90, "limit": 20}]},
    )

    inactive_days_threshold: int = Days
    limit: int = Field(10, ge=1, le=100)
    min_expired_count: int = Field(0, ge=0)


class BatchDeleteRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"user_ids": ["user_001"], "inactive_days_threshold": 90, "dry_run": True},
                {"all_expired": True, "inactive_days_threshold": 180},
            ]
        },
    )

    user_ids: list[str] | None = None
    all_expired: bool = False
    inactive_days_threshold: int = Days
    scope_id: str | None = None
    cleanup_retrieve_history: bool = Field(
        True, description="Accepted; omoide keeps no separate retrieval history to clean."
    )
    dry_run: bool = False
    force: bool = False


def owner(tenancy: Tenancy, scope_id: str | None = None) -> Owner:
    """Whose tasks these are and which tenants they reach (see ``Memory.refresh_expiry``)."""
    bound = tenancy.bound
    scope_id = native(scope_id)
    if bound is None:
        return Owner(tasks=ADMIN, scope_id=scope_id)
    tasks = resolve_scope(tenancy, None, scope_id)  # another scope than the bound one: 403
    if bound.scope_id is None and scope_id is None:  # user-wide: not under one of its scopes
        tasks = Scope(user_id=bound.user_id, scope_id=USER_TASKS)
    return Owner(tasks=tasks, user_id=bound.user_id, scope_id=bound.scope_id or scope_id)


def _time(value: datetime | None) -> str | None:
    return value.strftime("%Y-%m-%d %H:%M:%S") if value else None


def _unknown_task(task_id: str) -> str:
    """Also in upstream's words: its 404 detail is its manager's Chinese message, which
    clients written against it may show or match."""
    return f"task {task_id} not found (任务 {task_id} 不存在)"


def task_view(progress: ExpiryProgress) -> dict[str, Any]:
    """Upstream's task row: its JSON columns as JSON text, times as UTC ``Y-m-d H:M:S``."""
    job = progress.job
    finished = job.state in (JobState.DONE, JobState.FAILED)
    params = {k: v for k, v in job.payload.items() if k != "tenants"}
    if job.kind == EXPIRY_DELETE.name:
        params["user_ids"] = sorted({t["user_id"] for t in job.payload.get("tenants", [])})
    return {
        "task_id": str(job.id),
        "task_type": TASK_TYPES[job.kind],
        "status": STATES[job.state],
        "request_params": json.dumps(params, ensure_ascii=False),
        "result_summary": json.dumps(job.result, ensure_ascii=False) if job.result else None,
        "error_message": job.last_error,
        "total_users": progress.total_users,
        "processed_users": progress.processed_users,
        "deleted_count": progress.deleted,
        "failed_count": 0 if job.state is not JobState.FAILED else 1,
        "created_at": _time(job.created_at),
        "updated_at": _time(job.updated_at),
        "started_at": _time(job.updated_at) if job.state is not JobState.PENDING else None,
        "finished_at": _time(job.updated_at) if finished else None,
    }


def _submitted(outcome: Submitted, task_type: str, accepted: str) -> JSONResponse:
    if outcome.job is not None:
        body: dict[str, Any] = {
            "status": "accepted",
            "task_id": str(outcome.job.id),
            "task_type": task_type,
            "message": accepted,
        }
        if task_type == "batch_delete":
            body["total_users"] = outcome.users
        return JSONResponse(body, status_code=202)
    if outcome.existing is None:  # nothing to do
        return JSONResponse({"status": "success", "message": outcome.reason, "total_users": 0})
    existing: Job = outcome.existing
    return JSONResponse(
        {
            "status": "skipped",
            "task_type": task_type,
            "task_id": str(existing.id),
            "task_status": STATES[existing.state],
            "message": outcome.reason,
        }
    )


@router.post("/refresh", status_code=202, responses={200: {"description": "Skipped."}})
def refresh(body: RefreshRequest, memory: MemoryDep, tenancy: TenancyDep) -> JSONResponse:
    """Count the expired memories (30 days) as a background task: 202 with its `task_id`, or
    200 `skipped` when one is running or ran in the last 5 minutes (unless `force`)."""
    with failing_as("Error refreshing memory metadata"):
        outcome = memory.refresh_expiry(owner(tenancy), 30, force=body.force)
    return _submitted(outcome, "refresh_meta", "metadata refresh task submitted")


@router.post("/expired_memorys")
def expired_memorys(body: ExpiredRequest, memory: MemoryDep, tenancy: TenancyDep) -> dict[str, Any]:
    """The users with the most memories unused for `inactive_days_threshold` days, counted
    now (`top_users`, at most `limit`, each with at least `min_expired_count`)."""
    with failing_as("Error getting expired memories"):
        who = owner(tenancy)
        users = memory.expired_by_user(who, body.inactive_days_threshold)
        latest = memory.latest_expiry_task(who, "expiry_refresh")
    state = STATES[latest.state] if latest else "none"
    top = [
        {
            "scope_user": u.user_id,
            "total_count": u.total,
            "active_count": u.total - u.expired,
            "superseded_count": u.superseded,
            "expired_30d_count": u.expired,
            "expired_all_count": u.expired,
        }
        for u in users
        if u.expired >= body.min_expired_count
    ][: body.limit]
    return {
        "status": "scanning" if state == "running" else "success",
        "task_id": str(latest.id) if latest else None,
        "task_status": state,
        "inactive_days_threshold": body.inactive_days_threshold,
        "total_users": len(users),
        "total_expired_30d": sum(u.expired for u in users),
        "users_with_expired": sum(1 for u in users if u.expired),
        "top_users": top,
    }


@router.post(
    "/batch_delete",
    status_code=202,
    responses={200: {"description": "Skipped, or nothing to delete."}},
)
def batch_delete(body: BatchDeleteRequest, memory: MemoryDep, tenancy: TenancyDep) -> JSONResponse:
    """Delete the memories unused for `inactive_days_threshold` days of `user_ids` (or, with
    `all_expired`, of every user that has some) as a background task: 202 with its
    `task_id`; `dry_run` counts them without deleting (see the task's `result_summary`)."""
    if not body.user_ids and not body.all_expired:
        raise InvalidInput("user_ids or all_expired=true is required")
    with failing_as("Error batch deleting expired memories"):
        who = owner(tenancy, body.scope_id)
        users = None if body.all_expired else body.user_ids
        for user_id in body.user_ids or []:  # named beside all_expired too
            tenancy.scope(user_id, native(body.scope_id))  # another tenant's user: 403
        outcome = memory.delete_expired(
            who, body.inactive_days_threshold, users, dry_run=body.dry_run, force=body.force
        )
    message = f"batch delete task submitted for {outcome.users} users"
    return _submitted(outcome, "batch_delete", message)


@router.get("/task_status", responses={404: {"description": "No such task."}})
def task_status(
    memory: MemoryDep, tenancy: TenancyDep, task_id: str | None = None
) -> dict[str, Any]:
    """A task's state and progress (`processed_users` of `total_users`, `deleted_count`);
    without `task_id`, the newest task. 404 for a task that does not exist (or is not yours)."""
    with failing_as("Error getting task status"):
        who = owner(tenancy)
        if task_id is None:
            latest = memory.latest_expiry_task(who)
            if latest is None:
                return {"status": "success", "task": None, "message": "no task yet"}
            task_id = str(latest.id)
        # isdigit alone takes "²" (int() refuses it: a 500) and U+0661 (an Arabic-Indic 1)
        if not (task_id.isascii() and task_id.isdigit()) or len(task_id) > 18:
            raise NotFound(_unknown_task(task_id), id=task_id)
        try:
            progress = memory.expiry_progress(who, int(task_id))
        except NotFound as exc:
            raise NotFound(_unknown_task(task_id), id=task_id) from exc
    return {"status": "success", "task": task_view(progress)}
