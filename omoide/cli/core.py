"""The typer app and what every command shares: ``--db`` anywhere, the settings, opening the
``Memory``, one-line errors and ``--json`` output.

The commands live in the sibling modules by topic; ``omoide.cli`` imports them, which registers
them on ``app``.
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
from typer.core import TyperGroup

from omoide.config import Settings, load_settings
from omoide.errors import NotFound, OmoideError

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


app = typer.Typer(
    add_completion=False, no_args_is_help=True, help=HELP, cls=_DbAnywhere, rich_markup_mode=None
)
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
    return state.db or _settings().store.location


def _existing_db() -> Path | str:
    """The database path, which must exist: a read never creates an empty database."""
    path = _db_path()
    if isinstance(path, Path) and not path.exists():
        raise NotFound(
            f"no database at {path} (nothing stored yet: omoide add or omoide serve creates"
            " it; --db names another file)"
        )
    return path


def _memory(workers: int = 0, *, create: bool = False, settings: Settings | None = None) -> Any:
    """A ``Memory`` on the database; unless ``create``, only on one that exists."""
    from omoide.memory import Memory

    if not create:
        _existing_db()
    return Memory(state.db, settings=settings or _settings(), workers=workers)


def _interactive() -> bool:
    """A person at a terminal (stdin and stderr both one), not a script or a pipe."""
    return sys.stdin.isatty() and sys.stderr.isatty()


def _errors(func: F) -> F:
    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except OmoideError as exc:
            message = exc.message
        except OSError as exc:  # a path that is a file, a directory, unwritable, a full disk
            where = f"{exc.filename}: " if exc.filename else ""
            message = f"{where}{exc.strerror or exc}"
        err.print(f"error: {message}", markup=False, highlight=False, soft_wrap=True)
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
