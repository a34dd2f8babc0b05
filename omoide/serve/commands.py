"""What the emulated products add to the command line: their formats of ``omoide import`` and
``omoide export`` (WilmerAI's discussion files). The CLI mounts them with its plumbing."""

from __future__ import annotations

import typer

from omoide.compat.wilmer.commands import Shell
from omoide.compat.wilmer.commands import mount as mount_wilmer

__all__ = ["Shell", "mount_commands"]


def mount_commands(import_app: typer.Typer, export_app: typer.Typer, shell: Shell) -> None:
    mount_wilmer(import_app, export_app, shell)
