"""``omoide import`` / ``export``: omoide's own JSONL files; the emulated products' formats are
mounted from the composition root (``omoide.serve.commands``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import Progress
from typer.core import TyperGroup

from omoide.cli.core import JsonOpt, _emit, _errors, _memory, app, err, out
from omoide.errors import Conflict, NotFound
from omoide.serve.commands import Shell, mount_commands


class _FileOrToolGroup(TyperGroup):
    """``omoide import FILE.jsonl`` is ``omoide import jsonl FILE.jsonl`` (likewise ``export``);
    the other tools' formats stay subcommands (``omoide import <tool> DIR``)."""

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

    \b
    Example: omoide export alice.jsonl --user alice
    """
    if dest.exists():  # before the database is opened or a progress bar drawn
        raise Conflict(f"{dest} already exists; choose a new path (an export never overwrites)")
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

    \b
    Example: omoide import alice.jsonl
    """
    if not source.is_file():  # before the database is created or a progress bar drawn
        raise NotFound(f"no file {source} to import (omoide export writes one)")
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


mount_commands(import_app, export_app, Shell(_memory, _emit, _errors, out, err))
