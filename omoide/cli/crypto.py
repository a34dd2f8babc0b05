"""``omoide encrypt`` / ``decrypt`` / ``rekey``: the SQLite file's encryption, changed in place.

Keys come from the environment (``OMOIDE_ENCRYPTION_KEY`` is the current or target key,
``OMOIDE_NEW_ENCRYPTION_KEY`` rekey's new one) or a hidden prompt; they are never printed. Each
command needs the server stopped (it says so otherwise).
"""

from __future__ import annotations

from pathlib import Path

import typer

from omoide import store
from omoide.cli.core import JsonOpt, _emit, _errors, _existing_db, _settings, app, out
from omoide.config import Settings, process_environment
from omoide.errors import InvalidInput

NEW_KEY_ENV = "OMOIDE_NEW_ENCRYPTION_KEY"


def _prompt(label: str, *, confirm: bool) -> str:
    value = str(typer.prompt(label, hide_input=True, confirmation_prompt=confirm))
    if not value:
        raise InvalidInput("the key is empty")
    return value


def _current_key(settings: Settings) -> str:
    return settings.store.encryption_passphrase or _prompt("Current encryption key", confirm=False)


def _done(path: Path | str, action: str, as_json: bool) -> None:
    def say() -> None:
        out.print(action, markup=False, highlight=False)

    _emit({"path": str(path), "done": action}, as_json, say)


@app.command()
@_errors
def encrypt(as_json: JsonOpt = False) -> None:
    """Encrypt an unencrypted database in place with OMOIDE_ENCRYPTION_KEY (or a key typed
    at the prompt), safely: a copy is written, synced and renamed over the original.
    Stop the server first.

    \b
    Example: OMOIDE_ENCRYPTION_KEY=... omoide encrypt"""
    path = _existing_db()
    key = _settings().store.encryption_passphrase or _prompt("New encryption key", confirm=True)
    store.change_encryption(path, None, key)
    _done(path, f"encrypted {path}; keep OMOIDE_ENCRYPTION_KEY set to open it", as_json)


@app.command()
@_errors
def decrypt(as_json: JsonOpt = False) -> None:
    """Write the database back unencrypted, in place (the key from OMOIDE_ENCRYPTION_KEY or
    the prompt). Stop the server first; unset the key afterwards."""
    path = _existing_db()
    store.change_encryption(path, _current_key(_settings()), None)
    _done(path, f"decrypted {path}; unset OMOIDE_ENCRYPTION_KEY to open it", as_json)


@app.command()
@_errors
def rekey(as_json: JsonOpt = False) -> None:
    """Change the database's key: the current one from OMOIDE_ENCRYPTION_KEY (or the
    prompt), the new one from OMOIDE_NEW_ENCRYPTION_KEY (or the prompt). Backups and
    exports made before keep the old key. Stop the server first."""
    path = _existing_db()
    old = _current_key(_settings())
    new = process_environment(NEW_KEY_ENV).get(NEW_KEY_ENV) or _prompt(
        "New encryption key", confirm=True
    )
    store.change_encryption(path, old, new)
    _done(path, f"re-keyed {path}; set OMOIDE_ENCRYPTION_KEY to the new key", as_json)
