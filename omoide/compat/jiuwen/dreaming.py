"""JiuwenMemory's dreaming and scope config routes (upstream ``server/config_center_api.py``):

    POST /start_dreaming        a tenant's durable schedule    DreamingService.start
    POST /stop_dreaming         disable the matching ones      DreamingService.stop
    GET  /dreaming/status       every schedule, its last sweep DreamingService.status
    POST /set_scope_config      store a JSON object per tenant DreamingService.set_scope_config
    POST /get_scope_config      ... read it back               DreamingService.get_scope_config
    POST /delete_scope_config   ... delete it                  DreamingService.delete_scope_config

Upstream keeps its orchestrators in memory (gone on a restart) and its scope configs per scope;
here a schedule is a database row that survives a restart and runs as ``dream_sweep`` jobs in
whichever process runs jobs, and a scope config belongs to a tenant: ``user_id`` (an omoide
addition) defaults to ``"__default__"``, or the bound key's user, like every route. A bound key
starts, stops and sees only its own tenant's schedules.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from fastapi import APIRouter, Response
from pydantic import BaseModel, ConfigDict, Field

from omoide.api.deps import MemoryDep, TenancyDep
from omoide.compat.jiuwen.common import (
    DEFAULT,
    JiuwenRoute,
    failing_as,
    native,
    resolve_scope,
    wire,
)
from omoide.memory import DreamingStatus
from omoide.types import JobState, Scope
from omoide.validate import check_value

WARNING = "X-Omoide-Warning"

router = APIRouter(tags=["jiuwen"], route_class=JiuwenRoute)

Id = Field(min_length=1, max_length=256)


class StartDreamingRequest(BaseModel):
    model_config = ConfigDict(
        extra="ignore",
        json_schema_extra={
            "examples": [{"scope_id": "demo", "user_id": "user_001", "interval_seconds": 3600}]
        },
    )

    scope_id: str = Id
    user_id: str = Id
    enabled: bool = True
    interval_seconds: float = Field(14400.0, gt=0, le=366 * 86400)
    min_session_rounds: int = Field(4, ge=1, le=10**6)
    max_sessions_per_sweep: int = Field(10, ge=1, le=10**6)
    max_compress_tokens: int = Field(30000, gt=0, le=10**9)
    max_items_per_session: int = Field(5, ge=1, le=10**6)


class StopDreamingRequest(BaseModel):
    model_config = ConfigDict(
        extra="ignore", json_schema_extra={"examples": [{"scope_id": "demo", "user_id": "u1"}, {}]}
    )

    scope_id: str | None = None
    user_id: str | None = None


class ScopeConfigRequest(BaseModel):
    model_config = ConfigDict(
        extra="ignore", json_schema_extra={"examples": [{"scope_id": "demo"}]}
    )

    scope_id: str = Id
    user_id: str | None = Field(None, description='omoide\'s addition; "__default__".')


class SetScopeConfigRequest(ScopeConfigRequest):
    model_config = ConfigDict(
        extra="ignore",
        json_schema_extra={
            "examples": [
                {"scope_id": "demo", "config": {"user_profile_definition": "the user's own words"}}
            ]
        },
    )

    config: dict[str, Any]


def _iso(ms: int | None) -> str | None:
    return None if ms is None else datetime.fromtimestamp(ms / 1000, UTC).isoformat()


def _entry(status: DreamingStatus) -> dict[str, Any]:
    """Upstream's orchestrator entry, with the last sweep's job (omoide's addition)."""
    s, job = status.schedule, status.last_job
    report = job.result if job is not None and job.state is JobState.DONE else None
    interval = s.interval_ms / 1000
    next_ts = None
    if s.enabled and s.last_run_ms is not None:
        next_ts = datetime.fromtimestamp(s.last_run_ms / 1000, UTC) + timedelta(seconds=interval)
    return {
        "scope_id": wire(s.scope.scope_id),
        "user_id": wire(s.scope.user_id),
        "running": s.enabled,
        "interval_seconds": interval,
        "last_scan_ts": _iso(s.last_run_ms),
        "next_estimated_ts": next_ts.isoformat() if next_ts else None,
        "next_run_ts": _iso(s.next_run_ms) if s.enabled else None,
        "scanned_sessions_count": int(report.get("scanned_sessions", 0)) if report else 0,
        "last_promoted_count": report.get("promoted") if report else None,
        "sweeps": s.sweeps,
        "settings": s.settings,
        "last_sweep": None
        if job is None
        else {
            "task_id": str(job.id),
            "state": job.state.value,
            "report": job.result,
            "error": job.last_error,
        },
    }


@router.post("/start_dreaming")
def start_dreaming(
    body: StartDreamingRequest, memory: MemoryDep, tenancy: TenancyDep, response: Response
) -> dict[str, Any]:
    """Sweep the tenant's sessions every `interval_seconds` (the first one interval from now):
    each sweep consolidates the sessions with at least `min_session_rounds` open episodes.
    Durable: the schedule survives a restart. `enabled: false` stores it stopped. An interval
    under the server's `OMOIDE_DREAMING_MIN_INTERVAL_S` (60 s by default) is raised to it, and
    the `X-Omoide-Warning` header says so."""
    with failing_as("Error starting dreaming"):
        scope = tenancy.scope(native(body.user_id), native(body.scope_id))
        settings = body.model_dump(exclude={"scope_id", "user_id", "enabled", "interval_seconds"})
        started = memory.start_dreaming(
            scope, enabled=body.enabled, interval_s=body.interval_seconds, settings=settings
        )
        [stored] = memory.dreaming_status(scope.user_id, scope.scope_id)
    interval = stored.schedule.interval_ms / 1000
    if interval > body.interval_seconds + 0.001:
        response.headers[WARNING] = (
            f"interval_seconds {body.interval_seconds:g} is under this server's minimum:"
            f" sweeps every {interval:g} s (OMOIDE_DREAMING_MIN_INTERVAL_S)"
        )
    return {"started": started, "scope_id": wire(scope.scope_id), "user_id": wire(scope.user_id)}


@router.post("/stop_dreaming")
def stop_dreaming(
    body: StopDreamingRequest, memory: MemoryDep, tenancy: TenancyDep
) -> dict[str, Any]:
    """Stop the schedules of `user_id` and `scope_id` (either omitted: any; both: all)."""
    with failing_as("Error stopping dreaming"):
        user_id, scope_id = native(body.user_id), native(body.scope_id)
        if tenancy.bound is not None:
            scope = tenancy.scope(user_id, scope_id)  # another tenant: 403
            user_id, scope_id = scope.user_id, tenancy.bound.scope_id or scope_id
        memory.stop_dreaming(user_id, scope_id)
    return {"success": True, "scope_id": body.scope_id, "user_id": body.user_id}


@router.get("/dreaming/status")
def dreaming_status(
    memory: MemoryDep,
    tenancy: TenancyDep,
    user_id: str | None = None,
    scope_id: str | None = None,
) -> dict[str, Any]:
    """Every schedule (of `user_id` / `scope_id` when given): running, interval, last and
    next sweep, and what the last sweep did (`last_sweep.report`: which sessions it
    consolidated, or why nothing could be, e.g. no LLM)."""
    with failing_as("Error getting dreaming status"):
        user_id, scope_id = native(user_id), native(scope_id)
        if tenancy.bound is not None:
            scope = tenancy.scope(user_id, scope_id)
            user_id, scope_id = scope.user_id, tenancy.bound.scope_id or scope_id
        found = memory.dreaming_status(user_id, scope_id)
    return {"orchestrators": [_entry(s) for s in found]}


@router.post("/set_scope_config")
def set_scope_config(
    body: SetScopeConfigRequest, memory: MemoryDep, tenancy: TenancyDep
) -> dict[str, Any]:
    """Store the tenant's scope config (a JSON object, kept as given, replacing the old)."""
    check_value(body.config, "config")
    with failing_as("Error setting scope config"):
        memory.set_scope_config(_tenant(tenancy, body), body.config)
    return {"success": True}


@router.post("/get_scope_config")
def get_scope_config(
    body: ScopeConfigRequest, memory: MemoryDep, tenancy: TenancyDep
) -> dict[str, Any]:
    """The tenant's scope config, or `null`."""
    with failing_as("Error getting scope config"):
        return {"config": memory.get_scope_config(_tenant(tenancy, body))}


@router.post("/delete_scope_config")
def delete_scope_config(
    body: ScopeConfigRequest, memory: MemoryDep, tenancy: TenancyDep
) -> dict[str, Any]:
    """Delete the tenant's scope config; `success` false when there was none."""
    with failing_as("Error deleting scope config"):
        return {"success": memory.delete_scope_config(_tenant(tenancy, body))}


def _tenant(tenancy: TenancyDep, body: ScopeConfigRequest) -> Scope:
    return resolve_scope(tenancy, body.user_id, body.scope_id or DEFAULT)
