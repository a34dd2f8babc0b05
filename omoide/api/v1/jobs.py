"""``/v1/jobs``: the durable background jobs (embedding retries and, later, extraction).

A full-access caller who names no tenant sees every tenant's jobs; a tenant-bound key sees only
its own.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from omoide.api.deps import MemoryDep, TenancyDep
from omoide.api.models import ERROR_RESPONSES, JobId, JobList, JobQuery, TenantQuery
from omoide.types import Job

router = APIRouter(prefix="/v1/jobs", tags=["jobs"], responses=ERROR_RESPONSES)


@router.get("")
def list_jobs(
    query: Annotated[JobQuery, Query()], engine: MemoryDep, tenancy: TenancyDep
) -> JobList:
    """Jobs, newest first, with their state, attempts and last error."""
    scope = tenancy.optional_scope(query.user_id, query.scope_id)
    jobs = engine.list_jobs(scope=scope, state=query.state, limit=query.limit, offset=query.offset)
    return JobList(items=jobs)


@router.get("/stats")
def job_stats(
    query: Annotated[TenantQuery, Query()], engine: MemoryDep, tenancy: TenancyDep
) -> dict[str, int]:
    """How many jobs are in each state: pending, running, done, failed."""
    return engine.job_counts(scope=tenancy.optional_scope(query.user_id, query.scope_id))


@router.post("/{job_id}/retry")
def retry_job(
    job_id: JobId, query: Annotated[TenantQuery, Query()], engine: MemoryDep, tenancy: TenancyDep
) -> Job:
    """Put a failed job back in the queue (422 if it has not failed)."""
    return engine.retry_job(job_id, scope=tenancy.optional_scope(query.user_id, query.scope_id))
