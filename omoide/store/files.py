"""Files that hold memories are readable by their owner only.

A database holds every conversation of every tenant; with the default umask it would be created
0644 in a 0755 directory, readable by every local user. Directories omoide creates are 0700,
database files, backups and exports 0600. SQLite creates the ``-wal``, ``-shm`` and ``-journal``
files with the permissions of the database file, so creating the database file 0600 (before
SQLite opens it) covers them too; ``restrict_database`` also tightens ones left by older
versions.

    >>> prepare_database(Path("~/.omoide/omoide.db").expanduser())  # before sqlite3.connect
    >>> create_private(dest)  # before ``VACUUM INTO dest`` or writing an export

Directories that already exist are left alone (``/srv/data`` may be shared on purpose), except
the default data directory, which is omoide's own.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

DIR_MODE = 0o700
FILE_MODE = 0o600
SIDECARS = ("-wal", "-shm", "-journal")


def private_dir(path: Path) -> None:
    """Create ``path`` and any missing parents 0700 (``mkdir(parents=True)`` would make the
    parents with the umask's default, usually 0755)."""
    missing = []
    current = path
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for directory in reversed(missing):
        try:
            directory.mkdir(mode=DIR_MODE)
        except FileExistsError:
            continue  # another process made it first; its mode is its own
        os.chmod(directory, DIR_MODE)  # mkdir's mode is filtered by the umask


def create_private(path: Path) -> None:
    """Create ``path`` as an empty file only its owner can read, or tighten an existing one.

    An empty file is what SQLite treats as a new database and what ``VACUUM INTO`` accepts as
    its destination.
    """
    private_dir(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, FILE_MODE)
    os.close(fd)
    restrict(path)


def create_new_private(path: Path) -> None:
    """Create ``path`` as a new empty file only its owner can read; whatever is there already
    (a killed run's leftover, a planted symlink) is removed first and never followed."""
    private_dir(path.parent)
    path.unlink(missing_ok=True)  # removes a symlink itself, not what it points to
    create_exclusive(path)


def create_exclusive(path: Path) -> None:
    """Create ``path`` as a new empty file only its owner can read; ``FileExistsError`` if
    anything is there, a symlink too (even one pointing nowhere: never written through)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, FILE_MODE)
    os.close(fd)


def commit_file(partial: Path, dest: Path) -> None:
    """Make ``partial``'s bytes durable, rename it to ``dest`` and make the rename durable:
    after a crash there is the whole file or none."""
    fd = os.open(partial, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    partial.replace(dest)
    directory = os.open(dest.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def restrict(path: Path) -> None:
    """Remove group and other permissions from an existing file we own."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return
    if info.st_uid == os.getuid() and stat.S_IMODE(info.st_mode) & 0o077:
        os.chmod(path, stat.S_IMODE(info.st_mode) & ~0o077)


def prepare_database(path: Path, *, default_dir: Path | None = None) -> None:
    """Before opening a SQLite file: its directory 0700 if new, the file 0600, its sidecars
    tightened. ``default_dir`` (``~/.omoide``) is made 0700 even if it already exists."""
    if default_dir is not None and default_dir.is_dir():
        os.chmod(default_dir, DIR_MODE)
    create_private(path)
    restrict_database(path)


def restrict_database(path: Path) -> None:
    for suffix in ("", *SIDECARS):
        restrict(path.with_name(path.name + suffix))


def private_umask() -> None:
    """Make every file this process creates from now on private (adds 077 to the umask).

    For processes that are omoide (``omoide ...``, ``memory-server``): it also covers files
    created behind SQLite's back (WAL, backups, exports, temp files). Not for a library
    caller's process, whose umask is its own business.
    """
    old = os.umask(0o077)
    os.umask(old | 0o077)
