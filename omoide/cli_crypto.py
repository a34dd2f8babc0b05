"""``omoide encrypt`` / ``decrypt`` / ``rekey``: the SQLite file's encryption, changed in place.

Registered on the main app by ``omoide.cli`` (``register``), which hands over its helpers, so
this module needs nothing from it. Keys come from the environment (``OMOIDE_ENCRYPTION_KEY``
is the current or target key, ``OMOIDE_NEW_ENCRYPTION_KEY`` rekey's new one) or a hidden
prompt; they are never printed. Each command needs the server stopped (it says so otherwise).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from omoide.config import Settings
from omoide.errors import InvalidInput

NEW_KEY_ENV = "OMOIDE_NEW_ENCRYPTION_KEY"
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]


@dataclass(frozen=True)
class CliParts:
    """What the commands borrow from ``omoide.cli``."""

    existing_db: Callable[[], Path | str]
    settings: Callable[[], Settings]
    errors: Callable[[Callable[..., Any]], Callable[..., Any]]
    emit: Callable[[Any, bool, Callable[[], None]], None]
    say: Callable[[str], None]


def _prompt(label: str, *, confirm: bool) -> str:
    value = str(typer.prompt(label, hide_input=True, confirmation_prompt=confirm))
    if not value:
        raise InvalidInput("the key is empty")
    return value


def register(app: typer.Typer, parts: CliParts) -> None:
    """Add the three commands to ``app``."""
    from omoide.engine import admin

    def current_key(settings: Settings) -> str:
        return settings.encryption_passphrase or _prompt("Current encryption key", confirm=False)

    def done(path: Path | str, action: str, as_json: bool) -> None:
        parts.emit({"path": str(path), "done": action}, as_json, lambda: parts.say(action))

    @app.command()
    @parts.errors
    def encrypt(as_json: JsonOpt = False) -> None:
        """Encrypt an unencrypted database in place with OMOIDE_ENCRYPTION_KEY (or a key typed
        at the prompt), safely: a copy is written, synced and renamed over the original.
        Stop the server first.  Example: OMOIDE_ENCRYPTION_KEY=... omoide encrypt"""
        path = parts.existing_db()
        key = parts.settings().encryption_passphrase or _prompt("New encryption key", confirm=True)
        admin.change_encryption(path, None, key)
        done(path, f"encrypted {path}; keep OMOIDE_ENCRYPTION_KEY set to open it", as_json)

    @app.command()
    @parts.errors
    def decrypt(as_json: JsonOpt = False) -> None:
        """Write the database back unencrypted, in place (the key from OMOIDE_ENCRYPTION_KEY or
        the prompt). Stop the server first; unset the key afterwards."""
        path = parts.existing_db()
        admin.change_encryption(path, current_key(parts.settings()), None)
        done(path, f"decrypted {path}; unset OMOIDE_ENCRYPTION_KEY to open it", as_json)

    @app.command()
    @parts.errors
    def rekey(as_json: JsonOpt = False) -> None:
        """Change the database's key: the current one from OMOIDE_ENCRYPTION_KEY (or the
        prompt), the new one from OMOIDE_NEW_ENCRYPTION_KEY (or the prompt). Backups and
        exports made before keep the old key. Stop the server first."""
        path = parts.existing_db()
        old = current_key(parts.settings())
        new = os.environ.get(NEW_KEY_ENV) or _prompt("New encryption key", confirm=True)
        admin.change_encryption(path, old, new)
        done(path, f"re-keyed {path}; set OMOIDE_ENCRYPTION_KEY to the new key", as_json)
