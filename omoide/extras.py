"""What a command needs of the optional install (pyproject's extras), said in one line.

The base install (``pip install omoide``) is the library and its CLI. ``omoide serve``
and the compat servers' entry points need the ``server`` extra, ``omoide mcp`` the
``mcp`` one: where a module of theirs is missing, the command names it and the install that
brings it, instead of an ImportError's traceback.
"""

from __future__ import annotations

import importlib.util
import sys

# The top-level modules each extra brings that its commands import.
MODULES = {
    "server": ("fastapi", "uvicorn", "mcp", "prometheus_client"),
    "mcp": ("mcp",),
}


def missing(command: str, extra: str) -> str | None:
    """``None`` when the extra's modules are installed; otherwise the line to print."""
    absent = [name for name in MODULES[extra] if importlib.util.find_spec(name) is None]
    if not absent:
        return None
    return f"{command} needs {', '.join(absent)}: pip install 'omoide[{extra}]'"


def exit_without(command: str, extra: str) -> None:
    """For an entry point: that line on stderr and exit code 1 when the extra is missing."""
    message = missing(command, extra)
    if message is not None:
        sys.stderr.write(f"{message}\n")
        sys.exit(1)
