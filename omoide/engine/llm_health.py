"""``LLMHealth``: what ``/health`` says about the LLM, from a real call, cached briefly.

The LLM is asked for a one-field JSON answer (what ``OpenAICompatLLM.probe`` asks), so "ok"
means the endpoint answered with usable JSON just now, not merely that one is configured. The
answer is cached for ``ttl_s`` so that a load balancer polling ``/health`` costs at most one
small call per ``ttl_s``; while one check runs, other callers get the previous report instead
of queueing behind it (a hanging endpoint must not hang ``/health`` for every caller).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from omoide.errors import LLMError
from omoide.llm import LLM, kind_of

TTL_S = 30.0


class _Probe(BaseModel):
    ok: bool


class LLMHealth:
    """``report()``: ``{"status": "ok" | "down" | "error" | "disabled", "model", ...}``.

    ``down``: the endpoint is unreachable, timed out or overloaded (an outage; jobs wait for
    it); ``error``: it answered, but with a refusal or no usable JSON (see ``error``)."""

    def __init__(
        self, llm: LLM | None, *, ttl_s: float = TTL_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._llm = llm
        self._ttl_s = ttl_s
        self._clock = clock
        self._lock = threading.Lock()
        self._last: tuple[float, dict[str, Any]] | None = None

    def report(self) -> dict[str, Any]:
        if self._llm is None:
            return {"status": "disabled", "reason": "no LLM configured (OMOIDE_LLM_BASE_URL)"}
        last = self._last
        if last is not None and self._clock() - last[0] < self._ttl_s:
            return self._aged(last)
        if not self._lock.acquire(blocking=last is None):
            assert last is not None
            return self._aged(last)  # another caller is checking right now
        try:
            checked = (self._clock(), self._check(self._llm))
            self._last = checked
            return self._aged(checked)
        finally:
            self._lock.release()

    def _aged(self, last: tuple[float, dict[str, Any]]) -> dict[str, Any]:
        return {**last[1], "checked_s_ago": round(max(0.0, self._clock() - last[0]), 1)}

    @staticmethod
    def _check(llm: LLM) -> dict[str, Any]:
        out: dict[str, Any] = {"model": llm.name}
        try:
            llm.complete_json("Answer with JSON.", 'Reply with {"ok": true}.', _Probe)
        except LLMError as exc:
            kind = kind_of(exc)
            status = "down" if kind == "unavailable" else "error"
            return out | {"status": status, "kind": kind, "error": exc.message}
        fmt = getattr(llm, "response_format", None)
        return out | {"status": "ok"} | ({"response_format": fmt} if fmt else {})
