"""The SQLite driver: the standard library's, or SQLCipher's when an encryption key is set.

With ``OMOIDE_ENCRYPTION_KEY`` every page of the database, its WAL and every backup are
encrypted by SQLCipher (AES-256-CBC with an HMAC-SHA512 per page). SQLCipher turns a passphrase
into its key with PBKDF2-HMAC-SHA512 (256,000 iterations, ~0.1 s) on *every* connection it
opens; the store opens one per reader thread and for every export, check and status, which made
searches ~80x slower. So the key is derived here once per process and file, with the same
function and the file's own salt (its first 16 bytes), and handed to SQLCipher raw
(``PRAGMA key = "x'<key><salt>'"``): opening then costs microseconds, and the file is still an
ordinary SQLCipher 4 database that the ``sqlcipher`` shell opens with the passphrase.

The exception classes differ per driver, so the store catches ``Error`` / ``IntegrityError`` /
... from here (tuples of both drivers' classes), never ``sqlite3.X`` directly.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import os
import sqlite3
from pathlib import Path
from types import ModuleType
from typing import Any, cast
from urllib.parse import unquote, urlsplit

from omoide.errors import StoreError

PLAIN_HEADER = b"SQLite format 3\x00"
SALT_BYTES = 16
KDF_ITERATIONS = 256_000  # SQLCipher 4's default: our raw key equals its own derivation
INSTALL_HINT = "install the encryption extra: pip install 'omoide[encryption]' (sqlcipher3)"


def _sqlcipher() -> ModuleType | None:
    try:
        return importlib.import_module("sqlcipher3")
    except ImportError:
        return None


_CIPHER = _sqlcipher()


def _both(name: str) -> tuple[type[Any], ...]:
    found: tuple[type[Any], ...] = (getattr(sqlite3, name),)
    return found if _CIPHER is None else (*found, getattr(_CIPHER, name))


# ``except Error as exc`` catches either driver's error; typed as the stdlib's (same API).
Error = cast(tuple[type[sqlite3.Error], ...], _both("Error"))
DatabaseError = cast(tuple[type[sqlite3.DatabaseError], ...], _both("DatabaseError"))
IntegrityError = cast(tuple[type[sqlite3.IntegrityError], ...], _both("IntegrityError"))
OperationalError = cast(tuple[type[sqlite3.OperationalError], ...], _both("OperationalError"))


def available() -> bool:
    """True when SQLCipher (``sqlcipher3``) is installed."""
    return _CIPHER is not None


def require() -> ModuleType:
    """The SQLCipher module, or a ``StoreError`` saying how to install it."""
    if _CIPHER is None:
        raise StoreError(f"an encryption key is set but SQLCipher is missing: {INSTALL_HINT}")
    return _CIPHER


def is_encrypted(path: Path) -> bool:
    """True when ``path`` holds data but no plaintext SQLite header (encrypted, or not SQLite)."""
    try:
        with path.open("rb") as fh:
            head = fh.read(len(PLAIN_HEADER))
    except (FileNotFoundError, IsADirectoryError):
        return False
    return len(head) == len(PLAIN_HEADER) and head != PLAIN_HEADER


def file_salt(path: Path) -> bytes | None:
    """The salt an encrypted file starts with; ``None`` for a missing, empty or plain file."""
    if not is_encrypted(path):
        return None
    with path.open("rb") as fh:
        return fh.read(SALT_BYTES)


def key_pragma(passphrase: str, salt: bytes) -> str:
    """The ``PRAGMA key`` / ``ATTACH ... KEY`` value: the derived key and the salt, in hex."""
    return f"x'{_derive(passphrase, salt).hex()}{salt.hex()}'"


def pragma_for(passphrase: str, path: Path) -> str:
    """The key value for ``path``: its own salt, or a fresh one for a new file."""
    return key_pragma(passphrase, file_salt(path) or os.urandom(SALT_BYTES))


@functools.lru_cache(maxsize=16)
def _derive(passphrase: str, salt: bytes) -> bytes:
    # Once per passphrase and file per process (the point of this module, see its docstring).
    return hashlib.pbkdf2_hmac("sha512", passphrase.encode("utf-8"), salt, KDF_ITERATIONS, 32)


def open_connection(
    target: Path | str, passphrase: str | None, **kwargs: Any
) -> sqlite3.Connection:
    """A connection to ``target`` (a path, or a ``file:`` URI with ``uri=True``), keyed when a
    passphrase is given, and checked: a wrong or missing key is a ``StoreError`` saying so."""
    text = str(target)
    path = Path(unquote(urlsplit(text).path) if text.startswith("file:") else text)
    if passphrase is None:
        conn: sqlite3.Connection = sqlite3.connect(str(target), **kwargs)
        conn.row_factory = sqlite3.Row
        _check(conn, path, encrypted=False)
        return conn
    driver = require()
    raw = driver.connect(str(target), **kwargs)
    raw.row_factory = driver.Row
    raw.execute("PRAGMA cipher_log_level = NONE")  # a wrong key is our error, not stderr noise
    raw.execute(f'PRAGMA key = "{pragma_for(passphrase, path)}"')
    conn = cast(sqlite3.Connection, raw)  # the same DB-API surface as sqlite3's
    _check(conn, path, encrypted=True)
    return conn


def _check(conn: sqlite3.Connection, path: Path, *, encrypted: bool) -> None:
    """Read the schema once, so a key problem shows at open with a message that says which."""
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except DatabaseError as exc:
        conn.close()
        if getattr(exc, "sqlite_errorcode", None) != sqlite3.SQLITE_NOTADB:
            raise
        raise StoreError(_not_a_database(path, encrypted=encrypted), retryable=False) from None


def _not_a_database(path: Path, *, encrypted: bool) -> str:
    if encrypted and not is_encrypted(path):
        return (
            f"cannot open {path}: the encryption key is set but the database is not encrypted;"
            " run `omoide encrypt` to encrypt it, or unset OMOIDE_ENCRYPTION_KEY"
        )
    if encrypted:
        return f"cannot open {path}: wrong encryption key (OMOIDE_ENCRYPTION_KEY)"
    if is_encrypted(path):
        return (
            f"cannot open {path}: the database is encrypted, or not a SQLite file;"
            " set OMOIDE_ENCRYPTION_KEY to its key"
        )
    return f"cannot open {path}: not a SQLite database"
