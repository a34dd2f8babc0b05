"""Consolidation: ranking a session's episodes, planning what merging them changes, doing it,
and undoing it.

``ConsolidationReads`` is read outside a transaction (``store.consolidation``);
``ConsolidationWrites`` is used inside one (``with store.transaction() as tx:
tx.consolidation...``) and sees the transaction's own writes. Its ``consolidation_plan``
repeats the read so a writer can re-check, inside its transaction, the plan it computed from
an earlier read outside it.

Tenant rule: every method takes a ``Scope`` and touches only that tenant's sessions, episodes,
memories and graph rows; a session of another tenant is ``NotFound``.

The optimistic pattern consolidation follows (and a backend must make safe): read outside a
transaction, do the slow work (LLM, embeddings), then in one transaction re-read
(``consolidation_plan``), compare, and write only if nothing moved. The backend re-checks what
it can itself: ``apply_consolidation`` refuses episodes consolidated meanwhile. Write
transactions are serialised (SQLite: ``BEGIN IMMEDIATE``), so a re-read in the transaction
cannot change before its commit; a backend with weaker isolation must lock the rows for that.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from omoide.types import Scope


@dataclass(frozen=True)
class EpisodeStat:
    """What consolidation ranks an episode by: age, accesses, and whether it is done."""

    episode_id: str
    created_ms: int
    access_count: int
    last_accessed_ms: int | None
    consolidated: bool


@dataclass
class ConsolidationPlan:
    """What consolidating ``episodes`` changes, as the store sees it now."""

    episodes: list[str]
    memories: list[str] = field(default_factory=list)
    vectors: list[str] = field(default_factory=list)
    entities: list[str] = field(default_factory=list)
    relationships: list[str] = field(default_factory=list)


class ConsolidationReads(Protocol):
    """Episode stats and consolidation plans."""

    def episode_stats(self, scope: Scope, session_id: str) -> list[EpisodeStat]:
        """Every episode of the session, oldest first, with its access counters and whether
        it is consolidated. ``NotFound`` if no such session."""
        ...

    def consolidation_plan(self, scope: Scope, episode_ids: Sequence[str]) -> ConsolidationPlan:
        """What consolidating these episodes would change now (duplicates dropped, unknown
        ids contribute nothing; no error): the valid verbatim (raw, episodic) memories backed
        only by them, which of those have vectors, the extracted entities all of whose open
        provenance is among them, and those entities' relationships. Facts, profile entries,
        chunks and summaries are distilled knowledge and never in a plan."""
        ...


class ConsolidationWrites(Protocol):
    """Consolidations and their reverts, in the caller's transaction."""

    def consolidation_plan(self, scope: Scope, episode_ids: Sequence[str]) -> ConsolidationPlan:
        """``ConsolidationReads.consolidation_plan`` inside the transaction: compute the plan
        handed to ``apply_consolidation`` here, in the same transaction."""
        ...

    def apply_consolidation(
        self,
        scope: Scope,
        session_id: str,
        consolidation_id: str,
        plan: ConsolidationPlan,
        report: dict[str, Any],
        actor: str,
    ) -> None:
        """Carry out ``plan`` and record it as ``consolidation_id`` with ``report`` (its
        ``summary_id`` is what a revert invalidates).

        The plan's memories are invalidated (``DELETE`` history each, rows kept) and lose
        their vectors; its episodes are marked consolidated (kept); its entities are deleted
        with their relationships after a snapshot of those rows is stored with the record.
        Only the episodes are re-checked: ``Conflict`` if any is consolidated already, gone,
        or not in this session; the rest is trusted, hence computing the plan in this
        transaction. ``NotFound`` if no such session.
        """
        ...

    def revert_consolidation(
        self, scope: Scope, consolidation_id: str, actor: str
    ) -> dict[str, Any]:
        """Undo a consolidation: its memories that are still invalid become valid again
        (``UPDATE`` history each; they need re-embedding), its episodes unconsolidated, its
        summary invalidated, and the swept entities restored (merged into a same-named one
        created since) with their provenance and the relationships whose ends exist.

        Returns ``{"memories": restored ids, "entities": restored or merged ids,
        "summary_id"}``. ``NotFound`` if not the tenant's; ``Conflict`` if already reverted.
        """
        ...
