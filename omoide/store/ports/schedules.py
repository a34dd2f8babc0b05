"""Durable schedules (the periodic consolidation sweeps, "dreaming") and the per-tenant scope
config store.

``ScheduleReads`` is read outside a transaction (``store.schedules``); ``ScheduleWrites`` is
used inside one (``tx.schedules``) and sees the transaction's own writes.

Tenant rule: a schedule and a scope config belong to one tenant ``Scope``; every method takes
it, except the scheduler's global ones (``next_due``, ``claim_due``, and ``list_schedules``
with ``user_id=None``), which are for the worker processes and operators.

Concurrency: ``claim_due`` moves each due schedule's ``next_run_ms`` forward in the same
atomic statement that selects it, inside the caller's transaction; enqueue the sweep job in
that transaction. Of several processes claiming at once, each due schedule is claimed by exactly
one, so its sweep is enqueued once per interval (a rolled-back claim leaves it due).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from omoide.types import Scope


@dataclass(frozen=True)
class Schedule:
    """One tenant's schedule: every ``interval_ms`` while ``enabled``; ``settings`` are the
    caller's parameters, kept as given (JSON)."""

    scope: Scope
    enabled: bool
    interval_ms: int
    next_run_ms: int
    settings: dict[str, Any] = field(default_factory=dict)
    last_run_ms: int | None = None
    last_job_id: int | None = None
    sweeps: int = 0


class ScheduleReads(Protocol):
    """Schedules and scope configs, read outside a transaction."""

    def get_schedule(self, scope: Scope) -> Schedule | None:
        """The tenant's schedule, or None."""
        ...

    def list_schedules(self, user_id: str | None, scope_id: str | None) -> list[Schedule]:
        """Schedules of ``user_id`` (``None``: every user) and ``scope_id`` (``None``: every
        scope), ordered by user then scope."""
        ...

    def next_due(self) -> int | None:
        """The earliest ``next_run_ms`` of an enabled schedule of any tenant (None if none):
        lets a scheduler skip the write transaction while nothing is due."""
        ...

    def get_scope_config(self, scope: Scope) -> dict[str, Any] | None:
        """The tenant's stored scope config (a JSON object), or None."""
        ...


class ScheduleWrites(Protocol):
    """Schedule and scope-config writes in the caller's transaction."""

    def put_schedule(self, schedule: Schedule, at_ms: int) -> None:
        """Create or replace the tenant's schedule (``enabled``, interval, next run,
        settings); its run history (``last_run_ms``, ``last_job_id``, ``sweeps``) is kept."""
        ...

    def disable_schedules(self, user_id: str | None, scope_id: str | None, at_ms: int) -> int:
        """Disable the enabled schedules matching (``None``: any); return how many changed."""
        ...

    def claim_due(self, now_ms: int, limit: int, min_interval_ms: int = 0) -> list[Schedule]:
        """Claim up to ``limit`` enabled schedules of any tenant with ``next_run_ms <= now_ms``
        (earliest first): each gets ``next_run_ms = now_ms + max(interval_ms,
        min_interval_ms)``, ``last_run_ms = now_ms`` and one more ``sweeps``, and is returned as
        claimed. See the module doc."""
        ...

    def set_last_job(self, scope: Scope, job_id: int) -> None:
        """Record the job the tenant's last claimed sweep runs as; no-op without a schedule."""
        ...

    def set_scope_config(self, scope: Scope, config: dict[str, Any], at_ms: int) -> None:
        """Store (replace) the tenant's scope config."""
        ...

    def delete_scope_config(self, scope: Scope) -> bool:
        """Delete the tenant's scope config; whether there was one."""
        ...
