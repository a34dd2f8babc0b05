"""``omoide context``, ``graph neighborhood`` / ``search`` and ``consolidate``: what is built
on top of the memories (the context block, the knowledge graph, summaries)."""

from __future__ import annotations

from typing import Annotated

import typer

from omoide.cli.core import (
    JsonOpt,
    ScopeOpt,
    SessionOpt,
    UserOpt,
    _emit,
    _errors,
    _memory,
    app,
    err,
    out,
)

graph_app = typer.Typer(help="Walk and search the knowledge graph.", no_args_is_help=True)
app.add_typer(graph_app, name="graph")


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

    \b
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
    entity: Annotated[str, typer.Argument(help="An entity's name (any case) or id.")],
    depth: Annotated[int, typer.Option(help="How many relationships away, 0 to 6.")] = 1,
    user: UserOpt = "default",
    scope: ScopeOpt = "default",
    as_json: JsonOpt = False,
) -> None:
    """Entities within DEPTH relationships of ENTITY (either direction), with the edges.

    \b
    Example: omoide graph neighborhood Mei --depth 2 --user mei
    """
    with _memory() as memory:
        graph = memory.neighborhood(entity, depth, user_id=user, scope_id=scope)

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
    """Find entities by name.

    \b
    Example: omoide graph search "Mei" --user mei"""
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

    \b
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
