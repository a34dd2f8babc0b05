"""``LLMHealth``: what ``/health`` says about the LLM, from a real call, cached briefly.

An LLM built from the settings is checked as ``omoide doctor`` checks it, with the endpoint's
model list (``omoide.llm.probe``: a real request that costs no tokens); any other LLM is asked
for a one-field JSON answer (what ``OpenAICompatLLM.probe`` asks). So "ok" means the endpoint
answered just now, not merely that one is configured. The answer is cached for ``ttl_s``
(``CachedReport``): a load balancer polling ``/health`` costs at most one small call per
``ttl_s``, and a hanging endpoint does not hang ``/health`` for every caller.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from typing import Any

from pydantic import BaseModel

from omoide.engine.shared.cached_report import CachedReport
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
        self,
        llm: LLM | None,
        *,
        check: Callable[[], dict[str, Any]] | None = None,
        ttl_s: float = TTL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._check_endpoint = check
        self._cache: CachedReport | None = None
        if llm is not None:
            self._cache = CachedReport(partial(self._found, llm), ttl_s, clock)

    def report(self) -> dict[str, Any]:
        if self._cache is None:
            return {"status": "disabled", "reason": "no LLM configured (OMOIDE_LLM_BASE_URL)"}
        return self._cache.get()

    def _found(self, llm: LLM) -> dict[str, Any]:
        if self._check_endpoint is None:
            return self._check(llm)
        # the endpoint's address is configuration, not status (tenant keys see this)
        got = self._check_endpoint()
        found = {k: v for k, v in got.items() if k not in ("base_url", "model")}
        found["model"] = llm.name
        return found

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
