"""``CachedReport``: a health check over the network, run at most once per ``ttl_s``.

``/health`` is polled (a load balancer, a tenant's dashboard); a check that asks a server for
real must cost at most one small request per ``ttl_s``, and a hanging server must not hang
``/health`` for everyone. So: a fresh answer is served from the cache; while one caller runs
the check, the others get the previous answer at once instead of queueing behind it. Only the
very first callers, with no answer yet, wait, for one check bounded by its own timeout, and
they all take its answer (none runs the check again after waiting).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


class CachedReport:
    """``get()``: the check's report (a dict) with ``checked_s_ago``, at most ``ttl_s`` old."""

    def __init__(
        self, check: Callable[[], dict[str, Any]], ttl_s: float, clock: Callable[[], float]
    ) -> None:
        self._check = check
        self._ttl_s = ttl_s
        self._clock = clock
        self._lock = threading.Lock()
        self.last: tuple[float, dict[str, Any]] | None = None  # (clock at the check, report)

    def get(self) -> dict[str, Any]:
        last = self.last
        if last is not None and self.fresh(last[0]):
            return self.aged(last)
        if not self._lock.acquire(blocking=last is None):
            assert last is not None
            return self.aged(last)  # another caller is checking right now
        try:
            if self.last is not last and self.last is not None:
                return self.aged(self.last)  # checked while this caller waited for the lock
            checked = (self._clock(), self._check())
            self.last = checked
            return self.aged(checked)
        finally:
            self._lock.release()

    def fresh(self, at: float) -> bool:
        return self._clock() - at < self._ttl_s

    def aged(self, last: tuple[float, dict[str, Any]]) -> dict[str, Any]:
        return {**last[1], "checked_s_ago": round(max(0.0, self._clock() - last[0]), 1)}
