"""``MemoryEvents``: who is told that a tenant's memories changed, or are about to be read.

The services that write memories call ``written`` after their transaction committed; the ones
that search and list call ``reading`` first. With no subscriber (the default) both cost a loop
over an empty list. A subscriber's failure is logged, never raised: the database is the source
of truth, so a side copy that could not be refreshed must not fail the write or the read.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection

from omoide.types import MemoryType, Scope

log = logging.getLogger("omoide")

Written = Callable[[Scope, Collection[MemoryType] | None], None]
Reading = Callable[[Scope], None]


class MemoryEvents:
    def __init__(self) -> None:
        self._written: list[Written] = []
        self._reading: list[Reading] = []

    def on_written(self, subscriber: Written) -> None:
        self._written.append(subscriber)

    def on_reading(self, subscriber: Reading) -> None:
        self._reading.append(subscriber)

    def written(self, scope: Scope, types: Collection[MemoryType] | None = None) -> None:
        """``scope``'s memories changed (of ``types``; None: of any type, or not known)."""
        for subscriber in self._written:
            try:
                subscriber(scope, types)
            except Exception:
                log.exception("a memory change subscriber failed for %s", scope)

    def reading(self, scope: Scope) -> None:
        for subscriber in self._reading:
            try:
                subscriber(scope)
            except Exception:
                log.exception("a before-read subscriber failed for %s", scope)
