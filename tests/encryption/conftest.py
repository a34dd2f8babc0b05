"""Encryption tests need SQLCipher (the ``encryption`` extra, which ``make install`` installs)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("sqlcipher3", reason="the encryption extra (sqlcipher3) is not installed")

SENTENCE = b"the violet walrus hides the spare key under the third flowerpot"


def holds_plaintext(path: Path, needle: bytes = SENTENCE) -> bool:
    """True when the bytes of ``path`` contain ``needle`` (a missing file holds nothing)."""
    return path.exists() and needle in path.read_bytes()
