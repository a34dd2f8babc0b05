"""``omoide import wilmer`` / ``omoide export wilmer``: WilmerAI's discussion files on the
command line. The CLI mounts these commands on its ``import`` and ``export`` groups (through the
composition root, ``omoide.serve.commands``) and lends them its plumbing as a ``Shell``: open
the memory, print text or JSON, turn an omoide error into one line and exit code 1.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import Progress

from omoide.compat.wilmer import Wilmer
from omoide.compat.wilmer.exporter import WilmerExportResult
from omoide.compat.wilmer.importer import WilmerImportResult

User = Annotated[str, typer.Option("--user", "-u", help="Whose memories (user id).")]
Scope = Annotated[str, typer.Option("--scope", "-s", help="Which of the user's spaces (scope id).")]
Json = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]


@dataclass(frozen=True)
class Shell:
    """The CLI's plumbing: ``memory(create=...)`` opens the database's ``Memory`` (a context
    manager), ``emit(data, as_json, text)`` prints, ``errors`` wraps a command."""

    memory: Callable[..., Any]
    emit: Callable[[Any, bool, Callable[[], None]], None]
    errors: Callable[[Callable[..., None]], Callable[..., None]]
    out: Console
    err: Console


def mount(import_app: typer.Typer, export_app: typer.Typer, shell: Shell) -> None:
    """``wilmer`` on both groups."""
    out = shell.out

    @import_app.command("wilmer")
    @shell.errors
    def import_wilmer(
        directory: Path, user: User = "default", scope: Scope = "default", as_json: Json = False
    ) -> None:
        """Import WilmerAI discussions: <id>/memories.json, <id>/chat_summary.json and
        <id>/vector_memory.db (also under a per-API-key folder), the legacy <id>_memories.json,
        <id>_chat_summary.json, <id>_vector_memory.db, and <id>_memories.jsonl / <id>_summary.jsonl.
        Each discussion becomes session <id>, in one transaction. Idempotent. Exit 1 when a
        discussion could not be imported or nothing was recognised.

        \b
        Example: omoide import wilmer ~/WilmerAI/Public/DiscussionIds --user alice
        """
        with (
            shell.memory(create=True) as memory,
            Progress(console=shell.err, disable=as_json) as progress,
        ):
            task = progress.add_task("importing", total=None)
            result = Wilmer.of(memory).importer.import_wilmer(
                directory,
                user_id=user,
                scope_id=scope,
                progress=lambda n, total: progress.update(task, completed=n, total=total),
            )
        shell.emit(result, as_json, lambda: _show_import(result, out))
        if result.failed:
            raise typer.Exit(1)

    @export_app.command("wilmer")
    @shell.errors
    def export_wilmer(
        directory: Path,
        discussion: Annotated[str, typer.Option("--discussion", "-d", help="The discussion id.")],
        user: User = "default",
        scope: Scope = "default",
        as_json: Json = False,
    ) -> None:
        """Write one discussion back in WilmerAI's current layout: DIRECTORY/<id>/memories.json,
        and chat_summary.json and vector_memory.db when it has a summary or vector memories
        (plain JSON; existing files are not overwritten).

        \b
        Example: omoide export wilmer ~/WilmerAI/Public/DiscussionIds --discussion disc-1
        """
        with shell.memory() as memory:
            result = Wilmer.of(memory).exporter.export_wilmer(
                directory, discussion, user_id=user, scope_id=scope
            )
        shell.emit(result, as_json, lambda: _show_export(result, out))


def _show_import(result: WilmerImportResult, out: Console) -> None:
    for line in result.ignored:
        out.print(f"ignored {line}", markup=False)
    for d in result.discussions:
        if d.error is not None:
            out.print(f"{d.discussion_id}: not imported: {d.error}", markup=False)
        else:
            out.print(
                f"{d.discussion_id}: {d.chunks} chunks, {int(d.summary)} summary, "
                f"{d.vector_memories} vector memories, "
                + ("tracker set, " if d.tracker else "tracker unchanged, ")
                + ("condensation tracker set, " if d.condensation else "")
                + ("timestamps stored, " if d.timestamps else "")
                + f"{d.already} already imported",
                markup=False,
            )
        for reason in d.skipped:
            out.print(f"  skipped {reason}", markup=False)


def _show_export(result: WilmerExportResult, out: Console) -> None:
    out.print(
        f"{result.discussion_id}: {result.chunks} chunks, {int(result.summary)} summary, "
        f"{result.vector_memories} vector memories -> {result.folder}",
        markup=False,
    )
