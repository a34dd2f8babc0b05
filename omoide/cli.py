"""The ``omoide`` command line: a thin shell over ``Memory``.

Commands that only read (search, get, list, backup, ...) refuse a database file that does not
exist rather than create an empty one; ``--db`` is accepted before or after the command.
Output is for people unless ``--json``. Exit codes: 0 success, 1 an error (one line on
stderr), 2 a usage error.
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
from typer.core import TyperGroup

from omoide import cli_crypto
from omoide.config import Settings, load_settings
from omoide.errors import NotFound, OmoideError
from omoide.types import JobState, SearchFilters

HELP = """Long-term memory for LLM applications and agents.

Store what users say, search it, and serve it to agents (HTTP, MCP). Data lives in one SQLite
file, ~/.omoide/omoide.db unless --db names another (before or after the command).
Every command prints JSON with --json. Exit codes: 0 ok, 1 error, 2 wrong usage.
"""


class _DbAnywhere(TyperGroup):
    """The top-level group, taking ``--db PATH`` after the command too (``omoide list --db
    x.db``): the option is moved in front of the command before click parses it."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:  # typer's own click Context
        return super().parse_args(ctx, db_first(args))


def db_first(args: list[str]) -> list[str]:
    """``args`` with every ``--db PATH`` / ``--db=PATH`` moved to the front (up to ``--``)."""
    front: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            rest.extend(args[i:])
            break
        if arg == "--db" and i + 1 < len(args):
            front += args[i : i + 2]
            i += 2
            continue
        (front if arg.startswith("--db=") else rest).append(arg)
        i += 1
    return front + rest


app = typer.Typer(add_completion=False, no_args_is_help=True, help=HELP, cls=_DbAnywhere)
jobs_app = typer.Typer(help="Inspect and retry background jobs.", no_args_is_help=True)
app.add_typer(jobs_app, name="jobs")
graph_app = typer.Typer(help="Walk and search the knowledge graph.", no_args_is_help=True)
app.add_typer(graph_app, name="graph")


class _FileOrToolGroup(TyperGroup):
    """``omoide import FILE.jsonl`` is ``omoide import jsonl FILE.jsonl`` (likewise ``export``);
    the other tools' formats stay subcommands (``omoide import wilmer DIR``)."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:  # typer vendors click
        if args and args[0] not in self.commands and args[0] != "--help":
            args = ["jsonl", *args]
        return super().parse_args(ctx, args)


import_app = typer.Typer(
    cls=_FileOrToolGroup,
    help="Import an omoide export (omoide import FILE.jsonl) or memories from other tools.",
    no_args_is_help=True,
)
app.add_typer(import_app, name="import")
export_app = typer.Typer(
    cls=_FileOrToolGroup,
    help="Export to a JSONL file (omoide export FILE.jsonl) or to other tools' formats.",
    no_args_is_help=True,
)
app.add_typer(export_app, name="export")
out = Console()
err = Console(stderr=True)

F = TypeVar("F", bound=Callable[..., Any])
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]
UserOpt = Annotated[str, typer.Option("--user", "-u", help="Whose memories (user id).")]
ScopeOpt = Annotated[
    str, typer.Option("--scope", "-s", help="Which of the user's spaces (scope id).")
]
SessionOpt = Annotated[str | None, typer.Option(help="Conversation (session) id.")]


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
        Path | None,
        typer.Option(help="Database file (default ~/.omoide/omoide.db); also after the command."),
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


def _db_path() -> Path | str:
    """``--db``, else the store the settings name (a SQLite file or a PostgreSQL URL)."""
    return state.db or _settings().store_location


def _existing_db() -> Path | str:
    """The database path, which must exist: a read never creates an empty database."""
    path = _db_path()
    if isinstance(path, Path) and not path.exists():
        raise NotFound(
            f"no database at {path} (nothing stored yet: omoide add or omoide serve creates"
            " it; --db names another file)"
        )
    return path


def _memory(workers: int = 0, *, create: bool = False) -> Any:
    """A ``Memory`` on the database; unless ``create``, only on one that exists."""
    from omoide.memory import Memory

    if not create:
        _existing_db()
    return Memory(state.db, settings=_settings(), workers=workers)


def _errors(func: F) -> F:
    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except OmoideError as exc:
            err.print(f"error: {exc.message}", markup=False, highlight=False, soft_wrap=True)
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
    session: SessionOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Store TEXT as a memory.  Example: omoide add "I like jasmine tea" --user alice"""
    with _memory(create=True) as memory:
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
    """Search a user's memories by words and meaning.

    Example: omoide search "what tea?" --user alice
    """
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
    _emit(item, as_json, lambda: _show_memory(item))


@app.command("list")
@_errors
def list_(
    user: UserOpt = "default",
    scope: ScopeOpt = "default",
    limit: Annotated[int, typer.Option(help="Page size.")] = 20,
    offset: Annotated[int, typer.Option(help="Items to skip.")] = 0,
    as_json: JsonOpt = False,
) -> None:
    """List a user's memories, newest first.  Example: omoide list --user alice"""
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
    """Copy the whole database into one new file, safe while others write to it.

    Example: omoide backup ~/omoide-2026-11-29.db
    """
    from omoide.engine import admin

    admin.backup(_existing_db(), path, _settings().encryption_passphrase)
    _emit({"backup": str(path)}, as_json, lambda: out.print(f"backup written to {path}"))


@app.command()
@_errors
def migrate(
    status: Annotated[bool, typer.Option("--status", help="Only report; change nothing.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Bring the database schema up to date.  Example: omoide migrate --status"""
    from omoide.engine import admin

    path = _db_path()
    key = _settings().encryption_passphrase
    report = admin.migration_status(path, key) if status else admin.apply_migrations(path, key)

    def show() -> None:
        pending = report.get("pending") or []
        out.print(
            f"{report['path']}: schema {report['version']} of {report['latest']}", markup=False
        )
        if pending:
            verb = "pending" if status else "applied"
            out.print(f"{verb}: {', '.join(str(p) for p in pending)}", markup=False)
        else:
            out.print("up to date", markup=False)

    _emit(report, as_json, show)


@app.command()
@_errors
def doctor(as_json: JsonOpt = False) -> None:
    """Check the store, the embedder, the LLM (for real) and the job backlog.

    Exits 1 when the store (a corrupt file), the embedder (down or another model than the
    database's) or a configured LLM is down; memories without a vector are reported as
    "vectors: degraded".  Example: omoide doctor
    """
    # An explicit --db must exist (a typo would create an empty file); the default one is
    # created, as the first add or serve would.
    with _memory(create=state.db is None) as memory:
        report = memory.health(probe_embedder=True)
    settings = _settings()
    if settings.llm_base_url:
        from omoide.llm.probe import probe

        key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
        report["llm"] = probe(settings.llm_base_url, settings.llm_model, key)
    _emit(report, as_json, lambda: _show_health(report))
    parts = ("store", "embedder", "llm")
    if "down" in (report.get(name, {}).get("status") for name in parts):
        raise typer.Exit(1)


@app.command()
@_errors
def reindex(as_json: JsonOpt = False) -> None:
    """Recompute every memory's vector with the configured embedding model.

    Example: omoide reindex
    """
    with _memory() as memory, Progress(console=err, disable=as_json) as progress:
        task = progress.add_task("re-embedding", total=None)
        done = memory.reindex(lambda n, total: progress.update(task, completed=n, total=total))
    _emit({"reindexed": done}, as_json, lambda: out.print(f"re-embedded {done} memories"))


@app.command()
@_errors
def serve(
    host: Annotated[str | None, typer.Option(help="Bind address (IP / OMOIDE_HOST).")] = None,
    port: Annotated[int | None, typer.Option(help="Port (PORT / OMOIDE_PORT).")] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            min=0, max=32, help="Job worker threads; 0: run no jobs (leave them to omoide worker)."
        ),
    ] = None,
) -> None:
    """Start the HTTP server.  Example: omoide serve --port 8000 --workers 0"""
    from omoide.api.server import serve as run_server

    overrides: dict[str, Any] = {
        k: v for k, v in {"host": host, "port": port, "workers": workers}.items() if v is not None
    }
    if workers == 0:
        overrides["run_jobs"] = False  # not "run them in the request thread": never run them
    settings = _settings().model_copy(update=overrides)
    if state.db is not None:
        settings = settings.model_copy(update={"db_url": f"sqlite:///{state.db}"})
    run_server(settings)


@app.command()
@_errors
def worker(
    threads: Annotated[
        int | None,
        typer.Option(min=1, max=32, help="Worker threads (default OMOIDE_WORKERS, at least 1)."),
    ] = None,
) -> None:
    """Run the background jobs of the database, without HTTP, until SIGTERM or Ctrl-C (the
    batch in hand is finished first). Several workers, and servers started with
    "serve --workers 0", can share one database.  Example: omoide worker --threads 2
    """
    import logging
    import signal
    import threading

    from omoide.memory import Memory

    settings = _settings()
    level = getattr(logging, settings.log_level.upper(), logging.INFO)
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    count = threads or max(1, settings.workers)
    settings = settings.model_copy(update={"run_jobs": True, "workers": count})
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    memory = Memory(state.db, settings=settings, workers=count)
    where = memory.store.location
    err.print(f"omoide worker: started, threads={count}, store={where}", markup=False)
    try:
        while not stop.wait(1.0):  # the handlers run between waits; jobs run in the threads
            pass
        err.print("omoide worker: stopping after the batch in hand", markup=False)
    finally:
        memory.close()
    err.print("omoide worker: stopped", markup=False)


@app.command("mcp")
@_errors
def mcp_() -> None:
    """Serve the MCP tools over stdin/stdout, for an agent that starts omoide itself.

    Example (Claude Code): claude mcp add omoide -- omoide mcp
    """
    from omoide.api.mcp.stdio import run_stdio

    with _memory(workers=_settings().workers, create=True) as memory:
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
    session: SessionOpt = None,
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
    """Report what merging SESSION's old, rarely used exchanges into a summary would change;
    --run does it (needs an LLM), reversibly.

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


@export_app.command("jsonl")
@_errors
def export_(
    dest: Annotated[Path, typer.Argument(help="The JSONL file to write (must not exist).")],
    user: Annotated[str | None, typer.Option("--user", "-u", help="Only this user.")] = None,
    scope: Annotated[
        str | None, typer.Option("--scope", "-s", help="Only this scope of --user.")
    ] = None,
    plain: Annotated[
        bool,
        typer.Option("--plain", help="Write it unencrypted even though a key is set."),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Write everything (or one user, or one user's scope) to a JSONL file: memories with
    history and vectors, sessions, episodes, projects, the graph, summaries, chunks,
    variables and pending jobs. The file is created 0600, and encrypted (AES-256-GCM) when
    OMOIDE_ENCRYPTION_KEY is set, unless --plain.

    Example: omoide export alice.jsonl --user alice
    """
    with _memory() as memory, Progress(console=err, disable=as_json) as progress:
        task = progress.add_task("exporting", total=None)
        report = memory.export(
            dest,
            user_id=user,
            scope_id=scope,
            progress=lambda n, total: progress.update(task, completed=n, total=total),
            plain=plain,
        )
    data = {"path": str(dest), "records": report.records}
    _emit(data, as_json, lambda: out.print(f"exported {report.total} records to {dest}"))


@import_app.command("jsonl")
@_errors
def import_jsonl(
    source: Annotated[Path, typer.Argument(help="A file written by omoide export.")],
    reembed: Annotated[
        bool,
        typer.Option(
            "--reembed", help="Drop the file's vectors and queue re-embedding (another model)."
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Import an omoide export, keeping ids and times. Idempotent: what the store holds
    already is skipped. Refuses vectors of another embedding model unless --reembed.

    Example: omoide import alice.jsonl
    """
    with _memory(create=True) as memory, Progress(console=err, disable=as_json) as progress:
        task = progress.add_task("importing", total=None)
        report = memory.import_file(
            source,
            reembed=reembed,
            progress=lambda n, total: progress.update(task, completed=n, total=total),
        )
    data = {"records": report.records, "skipped": report.skipped, "embed_jobs": report.embed_jobs}

    def show() -> None:
        skipped = sum(report.skipped.values())
        line = f"imported {report.total} records, {skipped} already present"
        out.print(line + (f", {report.embed_jobs} embed jobs queued" if reembed else ""))

    _emit(data, as_json, show)


@import_app.command("wilmer")
@_errors
def import_wilmer(
    directory: Path,
    user: UserOpt = "default",
    scope: ScopeOpt = "default",
    as_json: JsonOpt = False,
) -> None:
    """Import WilmerAI discussions: <id>/memories.json, <id>/chat_summary.json and
    <id>/vector_memory.db (also under a per-API-key folder), the legacy <id>_memories.json,
    <id>_chat_summary.json, <id>_vector_memory.db, and <id>_memories.jsonl / <id>_summary.jsonl.
    Each discussion becomes session <id>, in one transaction. Idempotent. Exit 1 when a
    discussion could not be imported or nothing was recognised.

    Example: omoide import wilmer ~/WilmerAI/Public/DiscussionIds --user alice
    """
    from omoide.compat.wilmer import Wilmer

    with (
        _memory(create=True) as memory,
        Progress(console=err, disable=as_json) as progress,
    ):
        task = progress.add_task("importing", total=None)
        result = Wilmer.of(memory).importer.import_wilmer(
            directory,
            user_id=user,
            scope_id=scope,
            progress=lambda n, total: progress.update(task, completed=n, total=total),
        )
    _emit(result, as_json, lambda: _show_wilmer_import(result))
    if result.failed:
        raise typer.Exit(1)


def _show_wilmer_import(result: Any) -> None:
    for line in result.ignored:
        out.print(f"ignored {line}", markup=False)
    for d in result.discussions:
        if d.error is not None:
            out.print(f"{d.discussion_id}: not imported: {d.error}", markup=False)
        else:
            out.print(
                f"{d.discussion_id}: {d.chunks} chunks, {int(d.summary)} summary, "
                f"{d.vector_memories} vector memories, tracker {'set' if d.tracker else 'kept'}, "
                f"{d.already} already imported",
                markup=False,
            )
        for reason in d.skipped:
            out.print(f"  skipped {reason}", markup=False)


@export_app.command("wilmer")
@_errors
def export_wilmer(
    directory: Path,
    discussion: Annotated[str, typer.Option("--discussion", "-d", help="The discussion id.")],
    user: UserOpt = "default",
    scope: ScopeOpt = "default",
    as_json: JsonOpt = False,
) -> None:
    """Write one discussion back in WilmerAI's current layout: DIRECTORY/<id>/memories.json,
    chat_summary.json and vector_memory.db (plain JSON; existing files are not overwritten).

    Example: omoide export wilmer ~/WilmerAI/Public/DiscussionIds --discussion disc-1
    """
    from omoide.compat.wilmer import Wilmer

    with _memory() as memory:
        result = Wilmer.of(memory).exporter.export_wilmer(
            directory, discussion, user_id=user, scope_id=scope
        )

    def show() -> None:
        out.print(
            f"{result.discussion_id}: {result.chunks} chunks, {int(result.summary)} summary, "
            f"{result.vector_memories} vector memories -> {result.folder}",
            markup=False,
        )

    _emit(result, as_json, show)


def _show_memory(item: Any) -> None:
    """One memory for a person: its text, then the fields that say where it came from."""
    out.print(item.text, markup=False, highlight=False)
    fields = {
        "id": item.id,
        "user / scope": f"{item.user_id} / {item.scope_id}",
        "session": item.session_id,
        "type": item.type.value,
        "created": item.created_at.isoformat(timespec="seconds"),
        "updated": item.updated_at.isoformat(timespec="seconds"),
        "invalid since": item.invalid_at.isoformat(timespec="seconds") if item.invalid_at else None,
        "metadata": json.dumps(item.metadata) if item.metadata else None,
        "embedded": "yes" if item.embedded else "not yet (queued)",
    }
    for name, value in fields.items():
        if value is not None:
            out.print(f"  {name + ':':<15}{value}", markup=False, highlight=False)


def _llm_detail(llm: dict[str, Any]) -> str:
    if llm.get("error"):
        return str(llm["error"])
    if llm.get("model"):
        return f"{llm['model']} at {llm.get('base_url', '?')}"
    return str(llm.get("reason", ""))


def _show_health(report: dict[str, Any]) -> None:
    """The doctor's report as one line per part: status first, then what it is."""
    store, embedder, llm = report["store"], report["embedder"], report["llm"]
    lines = [
        ("omoide", "ok", f"version {report['version']}"),
        ("store", store["status"], f"{store['location']} (schema {store['schema_version']})"),
        ("embedder", embedder["status"], f"{embedder['name']}, {embedder['dimension']} dims"),
        ("llm", llm["status"], _llm_detail(llm)),
    ]
    for name, status, detail in lines:
        out.print(f"{name:<9} {status:<9} {detail}", markup=False, highlight=False)
    counts = ", ".join(f"{k} {v}" for k, v in report["jobs"].items())
    out.print(f"{'jobs':<9} {'':<9} {counts}", markup=False)


cli_crypto.register(
    app,
    cli_crypto.CliParts(
        existing_db=_existing_db,
        settings=_settings,
        errors=_errors,
        emit=_emit,
        say=lambda text: out.print(text, markup=False, highlight=False),
    ),
)


def main() -> None:
    from omoide.store.files import private_umask

    private_umask()  # databases, backups and exports this command creates are 0600 / 0700
    app()
