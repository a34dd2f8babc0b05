"""CPU seconds spent by groups of processes, from ``/proc`` (Linux): what a benchmark's cell
cost each side (the omoide processes, the PostgreSQL server) when they share the cores."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stat(pid: int) -> list[str] | None:
    try:
        # the command name may hold spaces and parentheses: the fields follow its last ")"
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):  # gone, or not Linux
        return None


def cpu_seconds(pids: Iterable[int]) -> float:
    """User + system CPU of ``pids`` (processes that exited count nothing)."""
    total = 0
    for pid in pids:
        fields = _stat(pid)
        if fields is not None:
            total += int(fields[11]) + int(fields[12])  # utime, stime (man 5 proc)
    return total / _TICK


def children(parent: int) -> list[int]:
    """The processes whose parent is ``parent`` (a postmaster's backends and workers)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (fields := _stat(int(entry.name))) and fields[1] == str(parent):
            found.append(int(entry.name))
    return found


def postmaster_pid(pgdata: Path) -> int | None:
    """The pid in a data directory's ``postmaster.pid`` (its first line)."""
    try:
        return int((pgdata / "postmaster.pid").read_text().split("\n", 1)[0])
    except (OSError, ValueError):
        return None
