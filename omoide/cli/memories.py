"""``omoide add`` / ``search`` / ``get`` / ``list`` / ``delete``: one user's memories."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.table import Table

from omoide.cli.core import (
    JsonOpt,
    ScopeOpt,
    SessionOpt,
    UserOpt,
    _emit,
    _errors,
    _interactive,
    _memory,
    app,
    err,
    out,
)
from omoide.types import DEFAULT_ID, SearchFilters


@app.command()
@_errors
def add(
    text: str,
    user: Annotated[
        str | None,
        typer.Option("--user", "-u", help="Whose memories (user id); default: default."),
    ] = None,
    scope: ScopeOpt = "default",
    session: SessionOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Store TEXT as a memory.

    \b
    Example: omoide add "I like jasmine tea" --user alice"""
    if user is None:
        user = DEFAULT_ID
        if _interactive():  # a person who forgot --user hears it; scripts stay quiet
            err.print(
                'warning: no --user given: storing for the user "default" (the tenant every '
                "door uses when none is named)",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )
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
        str | None, typer.Option(help="hybrid, hybrid_rrf, hybrid_weighted, keyword, vector.")
    ] = None,
    threshold: Annotated[
        float | None,
        typer.Option(min=0.0, max=1.0, help="Leave out hits that score below this (0 to 1)."),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Search a user's memories by words and meaning.

    \b
    Example: omoide search "what tea?" --user alice --threshold 0.2
    """
    with _memory() as memory:
        result = memory.search(
            query, user_id=user, scope_id=scope, limit=limit, recipe=recipe, threshold=threshold
        )

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
    """Show one memory.

    \b
    Example: omoide get 3f2a... --user alice"""
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
    """List a user's memories, newest first.

    \b
    Example: omoide list --user alice"""
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
    """Delete one memory.

    \b
    Example: omoide delete 3f2a... --user alice"""
    with _memory() as memory:
        memory.delete(memory_id, user_id=user, scope_id=scope)
    _emit({"deleted": memory_id}, as_json, lambda: out.print(f"deleted {memory_id}"))


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
