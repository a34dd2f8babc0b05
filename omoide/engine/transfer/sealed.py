"""Exports encrypted with the store's key: AES-256-GCM over 1 MiB chunks, streamed both ways.

Layout: ``MAGIC`` (16 bytes), a random salt (16) and nonce prefix (8), then chunks, each a
4-byte big-endian length and the chunk's ciphertext with its 16-byte tag. The key is
scrypt(passphrase, salt) (n=2^14, r=8, p=1: ~50 ms, once per file). Chunk ``i``'s nonce is the
prefix and ``i``; its associated data is the file header and a flag set on the last chunk only,
so reordered, dropped, swapped-in or truncated chunks fail authentication (the STREAM
construction) instead of importing a silently shorter file.

``open_sealed_writer`` / ``open_sealed_reader`` give text streams, so the export and import
code reads and writes lines exactly as for a plain file.
"""

from __future__ import annotations

import hashlib
import importlib
import io
import os
import struct
from pathlib import Path
from typing import IO, Any

from omoide.errors import InvalidInput, StoreError

MAGIC = b"omoide-sealed-1\n"
CHUNK = 1 << 20
_SALT = 16
_PREFIX = 8
_LEN = struct.Struct(">I")


def is_sealed(path: Path) -> bool:
    """True when ``path`` starts like a sealed export."""
    with path.open("rb") as fh:
        return fh.read(len(MAGIC)) == MAGIC


def _aesgcm(key: bytes) -> Any:
    try:
        aead = importlib.import_module("cryptography.hazmat.primitives.ciphers.aead")
    except ImportError:
        raise StoreError(
            "encrypted exports need the cryptography package: pip install 'omoide[encryption]'"
        ) from None
    return aead.AESGCM(key)


def _key(passphrase: str, salt: bytes) -> bytes:
    return hashlib.scrypt(passphrase.encode("utf-8"), salt=salt, n=1 << 14, r=8, p=1, dklen=32)


def _aad(header: bytes, final: bool) -> bytes:
    return header + (b"\x01" if final else b"\x00")


class _SealingWriter(io.RawIOBase):
    """Bytes in, sealed chunks out to ``raw``; ``close`` writes the final chunk."""

    def __init__(self, raw: IO[bytes], passphrase: str) -> None:
        super().__init__()
        salt, prefix = os.urandom(_SALT), os.urandom(_PREFIX)
        self._raw = raw
        self._header = MAGIC + salt + prefix
        self._prefix = prefix
        self._aes = _aesgcm(_key(passphrase, salt))
        self._buffer = bytearray()
        self._count = 0
        raw.write(self._header)

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self._buffer += bytes(data)
        while len(self._buffer) > CHUNK:  # keep at least a byte for the final chunk
            self._seal(bytes(self._buffer[:CHUNK]), final=False)
            del self._buffer[:CHUNK]
        return len(data)

    def _seal(self, plain: bytes, *, final: bool) -> None:
        nonce = self._prefix + struct.pack(">I", self._count)
        sealed = self._aes.encrypt(nonce, plain, _aad(self._header, final))
        self._raw.write(_LEN.pack(len(sealed)) + sealed)
        self._count += 1

    def close(self) -> None:
        if not self.closed:
            self._seal(bytes(self._buffer), final=True)
            self._raw.close()
        super().close()


class _OpeningReader(io.RawIOBase):
    """Sealed chunks in from ``raw``, authenticated plaintext out."""

    def __init__(self, raw: IO[bytes], passphrase: str) -> None:
        super().__init__()
        header = raw.read(len(MAGIC) + _SALT + _PREFIX)
        if not header.startswith(MAGIC) or len(header) < len(MAGIC) + _SALT + _PREFIX:
            raise InvalidInput("not an encrypted omoide export")
        salt = header[len(MAGIC) : len(MAGIC) + _SALT]
        self._raw = raw
        self._header = header
        self._prefix = header[-_PREFIX:]
        self._aes = _aesgcm(_key(passphrase, salt))
        self._pending = b""
        self._count = 0
        self._done = False

    def readable(self) -> bool:
        return True

    def readinto(self, target: Any) -> int:
        while not self._pending and not self._done:
            self._pending = self._next_chunk()
        size = min(len(target), len(self._pending))
        target[:size] = self._pending[:size]
        self._pending = self._pending[size:]
        return size

    def _next_chunk(self) -> bytes:
        head = self._raw.read(_LEN.size)
        if len(head) < _LEN.size:
            raise InvalidInput("the encrypted export is truncated (its last chunk is missing)")
        (length,) = _LEN.unpack(head)
        sealed = self._raw.read(length)
        nonce = self._prefix + struct.pack(">I", self._count)
        self._count += 1
        plain = self._open(nonce, sealed, final=False)
        if plain is None:
            plain = self._open(nonce, sealed, final=True)
            if plain is None:
                raise InvalidInput(
                    "cannot decrypt the export: wrong encryption key, or the file is damaged"
                )
            self._done = True
        return plain

    def _open(self, nonce: bytes, sealed: bytes, *, final: bool) -> bytes | None:
        from cryptography.exceptions import InvalidTag

        try:
            plain: bytes = self._aes.decrypt(nonce, sealed, _aad(self._header, final))
        except InvalidTag:
            return None
        return plain

    def close(self) -> None:
        self._raw.close()
        super().close()


def open_sealed_writer(path: Path, passphrase: str) -> IO[str]:
    """A text stream that writes ``path`` (which must exist, private) sealed."""
    raw = _SealingWriter(path.open("wb"), passphrase)
    return io.TextIOWrapper(io.BufferedWriter(raw, CHUNK), encoding="utf-8", newline="\n")


def open_sealed_reader(path: Path, passphrase: str | None) -> IO[str]:
    """A text stream of the sealed export at ``path``; ``InvalidInput`` without the key."""
    if passphrase is None:
        raise InvalidInput(
            f"{path} is an encrypted export: set OMOIDE_ENCRYPTION_KEY to the key it was"
            " written with"
        )
    raw = _OpeningReader(path.open("rb"), passphrase)
    return io.TextIOWrapper(io.BufferedReader(raw, CHUNK), encoding="utf-8", newline="\n")
