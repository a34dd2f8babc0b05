"""The operator's commands: backup, migrate, doctor, reindex, and running the server, the job
worker or the MCP stdio server."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import Progress

from omoide import extras
from omoide.cli.core import (
    JsonOpt,
    _db_path,
    _emit,
    _errors,
    _existing_db,
    _memory,
    _settings,
    app,
    err,
    out,
    state,
)
from omoide.embed import resolve_runtime
from omoide.errors import FeatureDisabled


@app.command()
@_errors
def backup(path: Path, as_json: JsonOpt = False) -> None:
    """Copy the whole database into one new file, safe while others write to it.

    \b
    Example: omoide backup ~/omoide-2026-11-29.db
    """
    from omoide import store

    store.backup(_existing_db(), path, encryption_key=_settings().store.encryption_passphrase)
    _emit({"backup": str(path)}, as_json, lambda: out.print(f"backup written to {path}"))


@app.command()
@_errors
def migrate(
    status: Annotated[bool, typer.Option("--status", help="Only report; change nothing.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Bring the database schema up to date.

    \b
    Example: omoide migrate --status"""
    from omoide import store

    path = _db_path()
    key = _settings().store.encryption_passphrase
    report = (
        store.migration_status(path, encryption_key=key)
        if status
        else store.apply_migrations(path, encryption_key=key)
    )

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
    "vectors: degraded".

    \b
    Example: omoide doctor
    """
    # An explicit --db must exist (a typo would create an empty file); the default one is
    # created, as the first add or serve would.
    with _memory(create=state.db is None) as memory:
        report = memory.health(probe_embedder=True)
    settings = _settings()
    if settings.llm.base_url:
        from omoide.llm.probe import probe

        key = settings.llm.api_key.get_secret_value() if settings.llm.api_key else None
        report["llm"] = probe(settings.llm.base_url, settings.llm.model, key)
    _emit(report, as_json, lambda: _show_health(report))
    parts = ("store", "embedder", "llm")
    if "down" in (report.get(name, {}).get("status") for name in parts):
        raise typer.Exit(1)


@app.command()
@_errors
def reindex(as_json: JsonOpt = False) -> None:
    """Recompute every memory's vector with the configured embedding model; with the default
    runtime (auto), with the one a new store gets (onnx-int8).

    \b
    Example: omoide reindex
    """
    settings = _settings()
    # auto keeps a store's runtime at startup; a reindex is the moment to move to a new store's
    runtime = resolve_runtime(settings.embed.runtime, None)
    switched = settings.updated(embed_runtime=runtime)
    with _memory(settings=switched) as memory, Progress(console=err, disable=as_json) as progress:
        task = progress.add_task("re-embedding", total=None)
        done = memory.reindex(lambda n, total: progress.update(task, completed=n, total=total))
    _emit({"reindexed": done}, as_json, lambda: out.print(f"re-embedded {done} memories"))


@app.command()
@_errors
def serve(
    host: Annotated[str | None, typer.Option(help="Bind address (IP / OMOIDE_HOST).")] = None,
    port: Annotated[
        int | None, typer.Option(min=0, max=65535, help="Port (PORT / OMOIDE_PORT).")
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            min=0, max=32, help="Job worker threads; 0: run no jobs (leave them to omoide worker)."
        ),
    ] = None,
) -> None:
    """Start the HTTP server.

    \b
    Example: omoide serve --port 8000 --workers 0"""
    _require("serve", "server")
    from omoide.serve.server import serve as run_server

    overrides: dict[str, Any] = {
        k: v for k, v in {"host": host, "port": port, "workers": workers}.items() if v is not None
    }
    if workers == 0:
        overrides["run_jobs"] = False  # not "run them in the request thread": never run them
    settings = _settings().updated(**overrides)
    if state.db is not None:
        settings = settings.updated(db_url=f"sqlite:///{state.db}")
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
    "serve --workers 0", can share one database.

    \b
    Example: omoide worker --threads 2
    """
    import logging
    import signal
    import threading

    from omoide.memory import Memory
    from omoide.redact import redact_logs
    from omoide.serve.process import limit_blas_threads

    settings = _settings()
    limit_blas_threads(settings.server.blas_threads)
    level = getattr(logging, settings.server.log_level.upper(), logging.INFO)
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    redact_logs()
    count = threads or max(1, settings.jobs.workers)
    settings = settings.updated(run_jobs=True, workers=count)
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

    \b
    Example (Claude Code; the full path, as the agent starts it without your venv):
      claude mcp add omoide -- /path/to/omoide/.venv/bin/omoide mcp
    """
    _require("mcp", "mcp")
    from omoide.mcp.stdio import run_stdio
    from omoide.serve.process import limit_blas_threads
    from omoide.serve.tools import mcp_tools

    limit_blas_threads(_settings().server.blas_threads)
    with _memory(workers=_settings().jobs.workers, create=True) as memory:
        run_stdio(memory, _settings(), mcp_tools)


def _require(command: str, extra: str) -> None:
    """One line naming the extra to install, where an ImportError would print a traceback: the
    base install is the library (``pip install omoide``), without the server's packages."""
    message = extras.missing(f"omoide {command}", extra)
    if message is not None:
        raise FeatureDisabled(message)


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
