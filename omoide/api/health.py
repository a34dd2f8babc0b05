"""``health_view``: the one health report every door shows (``GET /health``, MCP
``health_check``), cut to what the caller may see.

``healthy`` means every part that is asked answers: the store (``down`` when it fails or its
file is corrupt: the whole service is ``down``), the embedder, the LLM when one is configured,
and no memory is left without a vector. A remote embedder (``OMOIDE_EMBEDDER=openai`` or
``ollama``) is asked for real before the first embed too, briefly cached
(``omoide.engine.embedder_health``): one that cannot be reached is ``down`` with the reason, and
the service ``degraded`` (writes queue their vectors, search falls back to keywords). The bundled
local model needs no network: ``not loaded`` until its first use, which is healthy.

A full-access caller sees the whole report. A tenant-bound key sees the statuses of the shared
parts and figures of its own tenant only: no database location or driver text, no other
tenant's job counts, no server-wide counts of memories without a vector, and of the markdown
files (``INDEX_BACKEND=file``) their state without the data directory or the problems (each
names a tenant's user and scope ids). Every string is already redacted by the engine
(``omoide.redact``).
"""

from __future__ import annotations

from typing import Any

from omoide.api.deps import Tenancy
from omoide.memory import Memory

PARTS = ("store", "embedder", "vectors", "llm", "files")


def health_view(engine: Memory, tenancy: Tenancy, *, probe: bool = False) -> dict[str, Any]:
    """``{"status": "healthy" | "degraded" | "down", **parts}`` for this caller."""
    report = engine.health(probe_embedder=probe)
    if (mirror := engine.engine.services.mirror) is not None:
        report["files"] = mirror.status()
    states = {name: report.get(name, {}).get("status") for name in PARTS}
    down = {name for name, state in states.items() if state == "down"}
    status = (
        "down"
        if "store" in down
        else "degraded"
        if down or "degraded" in states.values()
        else "healthy"
    )
    if tenancy.bound is not None:
        report = _for_tenant(engine, tenancy, report)
    return {"status": status, **report}


def statuses(view: dict[str, Any]) -> dict[str, Any]:
    """What a caller without a key sees: the version and each part's status."""
    parts = {name: {"status": view[name].get("status")} for name in PARTS if name in view}
    return {"status": view["status"], "version": view["version"]} | parts


def _for_tenant(engine: Memory, tenancy: Tenancy, report: dict[str, Any]) -> dict[str, Any]:
    shown = dict(report)
    shown["store"] = {k: v for k, v in report["store"].items() if k not in ("location", "error")}
    shown["jobs"] = engine.job_counts(scope=tenancy.scope(None, None))
    for part in ("vectors", "files"):
        if part in report:
            shown[part] = {"status": report[part].get("status")}
    return shown
