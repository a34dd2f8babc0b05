"""Whether searches are arriving: background and bulk work yield to them meanwhile.

A search notes its start (``note_search``); a background build or a bulk write asks
``searching()`` between its slices of work and, while searches arrive, takes smaller slices
or rests, so a search waits for little of it (the embedder runs one call at a time). One
process-wide signal: every engine of the process shares the cores and the embedder.
"""

from __future__ import annotations

import time

BUSY_S = 2.0  # a search in the last this many seconds: searches are arriving
_last_search = -BUSY_S


def note_search() -> None:
    global _last_search
    _last_search = time.monotonic()


def searching() -> bool:
    return time.monotonic() - _last_search < BUSY_S
