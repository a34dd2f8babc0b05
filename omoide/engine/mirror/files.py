"""The markdown mirror's disk side: files read whole, replaced atomically, and its state.

``atomic_write`` is what makes a killed writer harmless: the new bytes go to a temp file in
the same directory, are fsynced, and are renamed over the old file (then the directory is
fsynced), so any reader, and the next process after a crash, sees the old file or the new one.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import signal
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omoide.types import MemoryType

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

STATE = ".omoide-mirror.json"  # per tenant dir: the hashes and texts last mirrored


@dataclass
class Files:
    """One tenant dir's files as read: bytes per type, or None when not UTF-8."""

    raw: dict[MemoryType, bytes] = field(default_factory=dict)
    text: dict[MemoryType, str | None] = field(default_factory=dict)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def load_state(where: Path) -> dict[str, Any]:
    """The last mirrored state; a missing or unreadable one is empty (every item is then
    compared with the database, so nothing reverts and nothing is deleted)."""
    try:
        value = json.loads((where / STATE).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def read_files(where: Path, names: dict[MemoryType, str]) -> Files:
    files = Files()
    for kind, name in names.items():
        data = read_bytes(where / name)
        if data is None:
            continue
        files.raw[kind] = data
        try:
            files.text[kind] = data.decode("utf-8")
        except UnicodeDecodeError:
            files.text[kind] = None
    return files


def being_written(path: Path) -> bool:
    """Whether a process holds ``path`` open for writing (an editor saving in place, which
    truncates first): its bytes are then half a file, whose missing items are no deletion.

    Linux refuses a read lease on a file open for writing anywhere (``EAGAIN``); the lease is
    dropped at once. Where leases do not exist or are not ours to take (another user's file,
    a filesystem without them) this cannot tell, and says no."""
    lease = getattr(fcntl, "F_SETLEASE", None) if fcntl is not None else None
    if lease is None:
        return False
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        # A writer opening the file while the lease is held would signal this process: SIGIO
        # by default, which ends it; SIGURG is ignored unless handled.
        fcntl.fcntl(fd, fcntl.F_SETSIG, signal.SIGURG)
        fcntl.fcntl(fd, lease, fcntl.F_RDLCK)
    except OSError as exc:
        return exc.errno == errno.EAGAIN
    else:
        fcntl.fcntl(fd, lease, fcntl.F_UNLCK)
        return False
    finally:
        os.close(fd)


def read_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def atomic_write(path: Path, data: bytes) -> None:
    """Replace ``path`` by ``data`` whole: a reader (or a crash) sees the old or the new file."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def remove_stale_temps(where: Path) -> None:
    """Temp files a killed writer left (every write happens under the lock we hold)."""
    for stale in where.glob(".*.tmp"):
        stale.unlink(missing_ok=True)
