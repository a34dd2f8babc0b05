"""``omoide jobs list`` / ``retry`` / ``run``: the background job queue."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from omoide.cli.core import JsonOpt, _emit, _errors, _memory, app, out
from omoide.types import JobState

jobs_app = typer.Typer(help="Inspect and retry background jobs.", no_args_is_help=True)
app.add_typer(jobs_app, name="jobs")


@jobs_app.command("list")
@_errors
def jobs_list(
    job_state: Annotated[JobState | None, typer.Option("--state", help="Only this state.")] = None,
    limit: Annotated[int, typer.Option(help="How many.")] = 50,
    as_json: JsonOpt = False,
) -> None:
    """List jobs with their state and last error.

    \b
    Example: omoide jobs list --state failed"""
    with _memory() as memory:
        jobs = memory.list_jobs(state=job_state, limit=limit)
        counts = memory.job_counts()

    def show() -> None:
        table = Table("id", "kind", "state", "attempts", "last error")
        for job in jobs:
            error = (job.last_error or "").strip().splitlines()[-1:] or [""]
            table.add_row(str(job.id), job.kind, job.state.value, str(job.attempts), error[0])
        out.print(table)
        out.print(", ".join(f"{k}: {v}" for k, v in counts.items()))

    _emit({"jobs": jobs, "counts": counts}, as_json, show)


@jobs_app.command("retry")
@_errors
def jobs_retry(job_id: int, as_json: JsonOpt = False) -> None:
    """Put a failed job back in the queue.

    \b
    Example: omoide jobs retry 12"""
    with _memory() as memory:
        job = memory.retry_job(job_id)
    _emit(job, as_json, lambda: out.print(f"job {job.id} is {job.state.value}"))


@jobs_app.command("run")
@_errors
def jobs_run(as_json: JsonOpt = False) -> None:
    """Run every due job now, in this process.

    \b
    Example: omoide jobs run"""
    with _memory() as memory:
        done = memory.run_jobs()
    _emit({"ran": done}, as_json, lambda: out.print(f"ran {done} jobs"))
