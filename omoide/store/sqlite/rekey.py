"""Encrypt, decrypt or re-key a SQLite file in place (``omoide encrypt`` / ``decrypt`` / ``rekey``).

Every change takes the file's lock exclusively first, so it fails at once with a clear message
while a server (or any other process) has the database open, instead of pulling the file from
under it. A new key on an encrypted file is ``PRAGMA rekey``: SQLCipher rewrites every page in
one transaction, so a crash leaves the old key. Encrypting or decrypting copies the database
with ``sqlcipher_export`` into a temporary file beside it, fsyncs it and renames it over the
original: a crash at any point leaves the original whole (and at worst a stale temporary file,
removed by the next run).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from omoide.errors import InvalidInput, StoreError
from omoide.store import files
from omoide.store.sqlite import cipher, migrate

_LOCK_WAIT_MS = 2_000
TEMP_SUFFIX = ".rewrite-tmp"


def change_key(path: Path, old: str | None, new: str | None) -> None:
    """Re-encrypt ``path`` from key ``old`` to key ``new`` (``None``: not encrypted)."""
    if not path.is_file() or path.stat().st_size == 0:
        raise InvalidInput(f"{path} does not exist or is empty")
    if old is None and new is None:
        raise InvalidInput("nothing to change: give a key to encrypt with or to decrypt from")
    if old is None and cipher.is_encrypted(path):
        raise InvalidInput(f"{path} is already encrypted: use `omoide rekey` to change its key")
    if old is not None and new is not None and old == new:
        raise InvalidInput("the new key is the same as the current one")
    src = _open_exclusive(path, old)
    try:
        if old is not None and new is not None:
            salt = cipher.file_salt(path)
            assert salt is not None  # opened with a key, so the file is encrypted
            src.execute(f'PRAGMA rekey = "{cipher.key_pragma(new, salt)}"')
            return
        tmp = path.with_name(path.name + TEMP_SUFFIX)
        _export(src, tmp, new)
    finally:
        src.close()
    _replace(tmp, path)


def _open_exclusive(path: Path, key: str | None) -> Any:
    """A SQLCipher connection holding the file's exclusive lock until it is closed."""
    driver = cipher.require()
    conn = cipher.open_connection(path, key, isolation_level=None) if key else None
    if conn is None:  # a plain file, still through SQLCipher: sqlcipher_export is its function
        conn = driver.connect(str(path), isolation_level=None)
        conn.row_factory = driver.Row
    conn.execute(f"PRAGMA busy_timeout = {_LOCK_WAIT_MS}")
    conn.execute("PRAGMA locking_mode = EXCLUSIVE")
    try:
        conn.execute("BEGIN EXCLUSIVE")
        conn.execute("COMMIT")
    except cipher.OperationalError as exc:
        conn.close()
        raise StoreError(
            f"{path} is in use by another process (a running server?): stop it first ({exc})",
            retryable=True,
        ) from None
    return conn


def _export(src: Any, tmp: Path, new: str | None) -> None:
    tmp.unlink(missing_ok=True)  # left by a crashed run
    files.create_private(tmp)
    key = "''" if new is None else f'"{cipher.key_pragma(new, os.urandom(cipher.SALT_BYTES))}"'
    version = migrate.current_version(src)
    try:
        src.execute(f"ATTACH DATABASE ? AS rewritten KEY {key}", (str(tmp),))
        src.execute("SELECT sqlcipher_export('rewritten')")
        src.execute(f"PRAGMA rewritten.user_version = {int(version)}")  # not copied by export
        src.execute("DETACH DATABASE rewritten")
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _replace(tmp: Path, path: Path) -> None:
    """Make ``tmp`` durable, then swap it in atomically (and make the rename durable)."""
    fd = os.open(tmp, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    wal = path.with_name(path.name + "-wal")
    if wal.exists() and wal.stat().st_size > 0:
        tmp.unlink(missing_ok=True)  # someone wrote after we let go: keep theirs, retry later
        raise StoreError(f"{path} was written to during the change; nothing changed, retry")
    os.replace(tmp, path)
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
