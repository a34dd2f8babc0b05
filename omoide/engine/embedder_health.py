"""``EmbedderHealth``: whether a remote embedder answers, before and after the first embed.

A remote embedder (``OMOIDE_EMBEDDER=openai`` or ``ollama``, ``omoide.embed.protocol.Remote``)
is asked for real: one short text embedded within ``timeout_s`` (``check``), its answer cached
for ``ttl_s`` (``CachedReport``: a load balancer polling ``/health`` costs at most one small
request per ``ttl_s``, and a hanging endpoint does not hang ``/health`` for every caller). A
real embed call is evidence too: when the latest one (a write, a search, a job) is fresher than
the last check, its outcome is the report and no request is made. So a server whose embedder
cannot be reached says so from its first ``/health``, and says "ok" again once the endpoint
answers.

The bundled local model is not asked: it needs no network, and it loads on first use
(``"not loaded"`` until then, which is healthy).
"""

from __future__ import annotations

import time
from typing import Any

from omoide.embed.protocol import Remote
from omoide.engine.shared.cached_report import CachedReport
from omoide.engine.shared.embedding import Embedding
from omoide.errors import EmbedderError
from omoide.redact import redact

TTL_S = 30.0
TIMEOUT_S = 5.0


class EmbedderHealth:
    """``report()``: ``{"status": "ok" | "down", "error"?, "checked_s_ago"}`` of a remote
    embedder, or None for one that is not remote (nothing to ask)."""

    def __init__(
        self,
        embedding: Embedding,
        *,
        ttl_s: float = TTL_S,
        timeout_s: float = TIMEOUT_S,
    ) -> None:
        self._embedding = embedding
        self._timeout_s = timeout_s
        # the clock of ``Embedding.last_call``, which is compared with the checks' times
        self._cache = CachedReport(self._check, ttl_s, time.monotonic)

    def report(self) -> dict[str, Any] | None:
        embedder = self._embedding.embedder  # looked up each time: it may be replaced
        if not isinstance(embedder, Remote):
            return None
        seen, checked = self._embedding.last_call, self._cache.last
        newer = seen is not None and (checked is None or seen[0] >= checked[0])
        if seen is not None and newer and self._cache.fresh(seen[0]):
            return self._cache.aged((seen[0], _verdict(embedder, seen[1])))
        return self._cache.get()

    def _check(self) -> dict[str, Any]:
        embedder = self._embedding.embedder
        if not isinstance(embedder, Remote):  # replaced by a local one meanwhile
            return {"status": "ok"}
        try:
            embedder.check(self._timeout_s)
        except EmbedderError as exc:
            return _verdict(embedder, exc.message)
        except Exception as exc:  # health reports failures instead of raising them
            return _verdict(embedder, f"{type(exc).__name__}: {exc}")
        return _verdict(embedder, None)


def _verdict(embedder: Remote, error: str | None) -> dict[str, Any]:
    if error is None:
        return {"status": "ok"}
    where = redact(embedder.endpoint)  # last: a query's mask runs to the next space
    return {"status": "down", "error": f"the embedder {embedder.name} failed: {error}; at {where}"}
