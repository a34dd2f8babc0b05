"""The operator's commands: a thin shell over ``Memory``. Every command takes ``--json``.

Exit codes: 0 success, 1 an omoide error (one line on stderr), 2 a usage error.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from pydantic import BaseModel
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from omoide.config import Settings, load_settings
from omoide.errors import OmoideError
from omoide.types import JobState, SearchFilters

app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__)
jobs_app = typer.Typer(help="Inspect and retry background jobs.", no_args_is_help=True)
app.add_typer(jobs_app, name="jobs")
graph_app = typer.Typer(help="Walk and search the knowledge graph.", no_args_is_help=True)
app.add_typer(graph_app, name="graph")
import_app = typer.Typer(help="Import memories from other tools.", no_args_is_help=True)
app.add_typer(import_app, name="import")
out = Console()
err = Console(stderr=True)

F = TypeVar("F", bound=Callable[..., Any])
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]
UserOpt = Annotated[str, typer.Option("--user", "-u", help="Tenant user id.")]
ScopeOpt = Annotated[str, typer.Option("--scope", "-s", help="Tenant scope id.")]


class _State:
    settings: Settings | None = None
    db: Path | None = None


state = _State()


def _print_version(value: bool) -> None:
    if value:
        from omoide._version import __version__

        out.print(f"omoide {__version__}", markup=False, highlight=False)
        raise typer.Exit()


@app.callback()
def _main(
    db: Annotated[
        Path | None, typer.Option(help="SQLite file (default ~/.omoide/omoide.db).")
    ] = None,
    version: Annotated[  # noqa: ARG001  # handled by its eager callback
        bool,
        typer.Option(
            "--version", help="Print the version and exit.", is_eager=True, callback=_print_version
        ),
    ] = False,
) -> None:
    """omoide: long-term memory for LLM applications and agents."""
    state.db = db


def _settings() -> Settings:
    if state.settings is None:
        state.settings = load_settings()
    return state.settings


def _memory(workers: int = 0) -> Any:
    from omoide.memory import Memory

    return Memory(state.db, settings=_settings(), workers=workers)


def _errors(func: F) -> F:
    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except OmoideError as exc:
            err.print(f"error: {exc.message}", markup=False, highlight=False)
            raise typer.Exit(1) from None

    return wrapper  # type: ignore[return-value]


def _emit(data: Any, as_json: bool, text: Callable[[], None]) -> None:
    if as_json:
        sys.stdout.write(json.dumps(_plain(data), indent=2, default=str) + "\n")
    else:
        text()


def _plain(data: Any) -> Any:
    if isinstance(data, BaseModel):
        return data.model_dump(mode="json")
    if isinstance(data, list | tuple):
        return [_plain(d) for d in data]
    if isinstance(data, dict):
        return {k: _plain(v) for k, v in data.items()}
    return data


@app.command()
@_errors
def add(
    text: str,
    user: UserOpt = "default",
    scope: ScopeOpt = "default",
    session: Annotated[str | None, typer.Option(help="Session (external) id.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Store TEXT as a memory.  Example: omoide add "I like jasmine tea" --user alice"""
    with _memory() as memory:
        items = memory.add(text, user_id=user, scope_id=scope, session_id=session)

    def show() -> None:
        for item in items:
            out.print(f"added {item.id}")

    _emit(items, as_json, show)


@app.command()
@_errors
def search(
    query: str,
    user: UserOpt = "default",
    scope: ScopeOpt = "default",
    limit: Annotated[int, typer.Option(help="How many hits.")] = 10,
    recipe: Annotated[
        str | None, typer.Option(help="hybrid, hybrid_weighted, keyword, vector.")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Search a tenant's memories.  Example: omoide search "what tea?" --user alice"""
    with _memory() as memory:
        result = memory.search(query, user_id=user, scope_id=scope, limit=limit, recipe=recipe)

    def show() -> None:
        for warning in result.warnings:
            err.print(f"warning: {warning}", markup=False)
        table = Table("score", "id", "text")
        for hit in result.hits:
            table.add_row(f"{hit.score:.3f}", hit.memory.id, hit.memory.text[:120])
        out.print(table)

    _emit(result, as_json, show)


@app.command()
@_errors
def get(
    memory_id: str, user: UserOpt = "default", scope: ScopeOpt = "default", as_json: JsonOpt = False
) -> None:
    """Show one memory.  Example: omoide get 3f2a... --user alice"""
    with _memory() as memory:
        item = memory.get(memory_id, user_id=user, scope_id=scope)
    _emit(item, as_json, lambda: out.print_json(item.model_dump_json()))


@app.command("list")
@_errors
def list_(
    user: UserOpt = "default",
    scope: ScopeOpt = "default",
    limit: Annotated[int, typer.Option(help="Page size.")] = 20,
    offset: Annotated[int, typer.Option(help="Items to skip.")] = 0,
    as_json: JsonOpt = False,
) -> None:
    """List a tenant's memories, newest first.  Example: omoide list --user alice"""
    with _memory() as memory:
        page = memory.get_all(
            user_id=user, scope_id=scope, filters=SearchFilters(), limit=limit, offset=offset
        )

    def show() -> None:
        for item in page.items:
            out.print(f"{item.id}  {item.type.value:<8} {item.text[:100]}", markup=False)
        out.print(f"{len(page.items)} of {page.total}")

    _emit(page, as_json, show)


@app.command()
@_errors
def delete(
    memory_id: str, user: UserOpt = "default", scope: ScopeOpt = "default", as_json: JsonOpt = False
) -> None:
    """Delete one memory.  Example: omoide delete 3f2a... --user alice"""
    with _memory() as memory:
        memory.delete(memory_id, user_id=user, scope_id=scope)
    _emit({"deleted": memory_id}, as_json, lambda: out.print(f"deleted {memory_id}"))


@app.command()
@_errors
def backup(path: Path, as_json: JsonOpt = False) -> None:
    """Write a complete single-file snapshot (VACUUM INTO), safe while others write.

    Example: omoide backup ~/omoide-2026-11-29.db
    """
    from omoide.engine import admin

    admin.backup(state.db or _settings().db_path, path)
    _emit({"backup": str(path)}, as_json, lambda: out.print(f"backup written to {path}"))


@app.command()
@_errors
def migrate(
    status: Annotated[bool, typer.Option("--status", help="Only report; change nothing.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Bring the database schema up to date.  Example: omoide migrate --status"""
    from omoide.engine import admin

    path = state.db or _settings().db_path
    report = admin.migration_status(path) if status else admin.apply_migrations(path)
    _emit(report, as_json, lambda: out.print_json(json.dumps(report)))


@app.command()
@_errors
def doctor(as_json: JsonOpt = False) -> None:
    """Check the store, the embedder, the LLM (for real) and the job backlog.

    Exits 1 when the store (a corrupt file), the embedder (down or another model than the
    database's) or a configured LLM is down; memories without a vector are reported as
    `vectors: degraded`.  Example: omoide doctor
    """
    with _memory() as memory:
        report = memory.health(probe_embedder=True)
    settings = _settings()
    if settings.llm_base_url:
        from omoide.llm.probe import probe

        key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
        report["llm"] = probe(settings.llm_base_url, settings.llm_model, key)
    _emit(report, as_json, lambda: out.print_json(json.dumps(report, default=str)))
    parts = ("store", "embedder", "llm")
    if "down" in (report.get(name, {}).get("status") for name in parts):
        raise typer.Exit(1)


@app.command()
@_errors
def reindex(as_json: JsonOpt = False) -> None:
    """Re-embed every memory with the configured embedder.  Example: omoide reindex"""
    with _memory() as memory, Progress(console=err, disable=as_json) as progress:
        task = progress.add_task("re-embedding", total=None)
        done = memory.reindex(lambda n, total: progress.update(task, completed=n, total=total))
    _emit({"reindexed": done}, as_json, lambda: out.print(f"re-embedded {done} memories"))


@app.command()
@_errors
def serve(
    host: Annotated[str | None, typer.Option(help="Bind address (IP / OMOIDE_HOST).")] = None,
    port: Annotated[int | None, typer.Option(help="Port (PORT / OMOIDE_PORT).")] = None,
) -> None:
    """Start the HTTP server.  Example: omoide serve --port 8000"""
    from omoide.api.server import serve as run_server

    overrides = {k: v for k, v in {"host": host, "port": port}.items() if v is not None}
    settings = _settings().model_copy(update=overrides)
    if state.db is not None:
        settings = settings.model_copy(update={"db_url": f"sqlite:///{state.db}"})
    run_server(settings)


@app.command("mcp")
@_errors
def mcp_() -> None:
    """Serve the MCP tools over stdin/stdout, for an agent that starts omoide itself.

    Example (Claude Code): claude mcp add omoide -- omoide mcp
    """
    from omoide.api.mcp.stdio import run_stdio

    with _memory(workers=_settings().workers) as memory:
        run_stdio(memory, _settings())


@jobs_app.command("list")
@_errors
def jobs_list(
    job_state: Annotated[JobState | None, typer.Option("--state", help="Only this state.")] = None,
    limit: Annotated[int, typer.Option(help="How many.")] = 50,
    as_json: JsonOpt = False,
) -> None:
    """List jobs with their state and last error.  Example: omoide jobs list --state failed"""
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
    """Put a failed job back in the queue.  Example: omoide jobs retry 12"""
    with _memory() as memory:
        job = memory.retry_job(job_id)
    _emit(job, as_json, lambda: out.print(f"job {job.id} is {job.state.value}"))


@jobs_app.command("run")
@_errors
def jobs_run(as_json: JsonOpt = False) -> None:
    """Run every due job now, in this process.  Example: omoide jobs run"""
    with _memory() as memory:
        done = memory.run_jobs()
    _emit({"ran": done}, as_json, lambda: out.print(f"ran {done} jobs"))


@app.command()
@_errors
def context(
    query: str,
    user: UserOpt = "default",
    scope: ScopeOpt = "default",
    session: Annotated[str | None, typer.Option(help="Session (external) id.")] = None,
    budget: Annotated[int, typer.Option(help="Token budget of the block.")] = 2000,
    as_json: JsonOpt = False,
) -> None:
    """Print the context block for QUERY: profile, summary, relevant memories, graph and
    recent turns, within the token budget.

    Example: omoide context "where does Mei live?" --user mei --session chat-1 --budget 1000
    """
    with _memory() as memory:
        result = memory.context(
            query, user_id=user, scope_id=scope, session_id=session, token_budget=budget
        )

    def show() -> None:
        for warning in result.warnings:
            err.print(f"warning: {warning}", markup=False)
        out.print(result.text, markup=False, highlight=False)
        err.print(f"{result.tokens} of {result.token_budget} tokens ({result.tokenizer})")

    _emit(result, as_json, show)


@graph_app.command("neighborhood")
@_errors
def graph_neighborhood(
    entity_id: str,
    depth: Annotated[int, typer.Option(help="How many relationships away, 0 to 6.")] = 1,
    user: UserOpt = "default",
    scope: ScopeOpt = "default",
    as_json: JsonOpt = False,
) -> None:
    """Entities within DEPTH relationships of ENTITY_ID (either direction), with the edges.

    Example: omoide graph neighborhood 3f2a... --depth 2 --user mei
    """
    with _memory() as memory:
        graph = memory.neighborhood(entity_id, depth, user_id=user, scope_id=scope)

    def show() -> None:
        for node in graph.nodes:
            out.print(f"{node.depth}  {node.id}  {node.name} ({node.type})", markup=False)
        for edge in graph.edges:
            out.print(f"{edge.from_name} -[{edge.label}]-> {edge.to_name}", markup=False)

    _emit(graph, as_json, show)


@graph_app.command("search")
@_errors
def graph_search(
    query: str,
    user: UserOpt = "default",
    scope: ScopeOpt = "default",
    limit: Annotated[int, typer.Option(help="How many entities.")] = 10,
    as_json: JsonOpt = False,
) -> None:
    """Find entities by name.  Example: omoide graph search "Mei" --user mei"""
    with _memory() as memory:
        result = memory.search_entities(query, user_id=user, scope_id=scope, limit=limit)

    def show() -> None:
        for warning in result.warnings:
            err.print(f"warning: {warning}", markup=False)
        for hit in result.hits:
            entity = hit.entity
            line = f"{hit.score:.3f}  {entity.id}  {entity.name} ({entity.type})"
            out.print(line, markup=False)

    _emit(result, as_json, show)


@app.command()
@_errors
def consolidate(
    session: str,
    user: UserOpt = "default",
    scope: ScopeOpt = "default",
    run: Annotated[bool, typer.Option("--run", help="Do it (default: dry run).")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Report what consolidating SESSION's old, rarely used episodes into a summary would
    change; --run does it (needs an LLM), reversibly.

    Example: omoide consolidate chat-1 --user alice --run
    """
    with _memory() as memory:
        report = memory.consolidate(session, user_id=user, scope_id=scope, run=run)

    def show() -> None:
        if not report.eligible:
            out.print(f"not eligible: {report.reason}", markup=False)
            return
        verb = "would change" if report.dry_run else "changed"
        out.print(
            f"{verb}: {len(report.episodes)} episodes, {len(report.memories)} memories, "
            f"{len(report.vectors)} vectors, {len(report.entities)} entities, "
            f"{len(report.relationships)} relationships",
            markup=False,
        )
        if report.id:
            out.print(f"consolidation {report.id}, summary {report.summary_id}", markup=False)

    _emit(report, as_json, show)


@import_app.command("wilmer")
@_errors
def import_wilmer(
    directory: Path,
    user: UserOpt = "default",
    scope: ScopeOpt = "default",
    as_json: JsonOpt = False,
) -> None:
    """Import a WilmerAI discussion directory (<id>_memories.jsonl, <id>_summary.jsonl,
    <id>_vector_memory.db) as chunk, summary and vector memories of session <id>. Idempotent.

    Example: omoide import wilmer ~/WilmerAI/Public/DiscussionIds --user alice
    """
    from omoide.compat.wilmer import Wilmer

    with _memory() as memory, Progress(console=err, disable=as_json) as progress:
        task = progress.add_task("importing", total=None)
        result = Wilmer.of(memory).importer.import_wilmer(
            directory,
            user_id=user,
            scope_id=scope,
            progress=lambda n, total: progress.update(task, completed=n, total=total),
        )

    def show() -> None:
        out.print(
            f"{len(result.discussions)} discussions: {result.chunks} chunks, "
            f"{result.summaries} summaries, {result.vector_memories} vector memories, "
            f"{result.skipped} already imported",
            markup=False,
        )

    _emit(result, as_json, show)


def main() -> None:
    from omoide.store.files import private_umask

    private_umask()  # databases, backups and exports this command creates are 0600 / 0700
    app()
