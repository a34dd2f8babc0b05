"""Consolidation: old, rarely used episodes of a session merged into one summary memory.

Candidates: each episode not yet consolidated scores
``access_count / (1 + days since last access)``; an episode never accessed counts from its
creation and scores 0 (the most eligible). Episodes younger than ``min_age_days`` are not
candidates, and a session with fewer than ``min_session_episodes`` open episodes is not
eligible at all.

The pass takes the candidates scoring at most ``max_score`` (oldest
first, ``consolidation_batch`` at a time), has the LLM summarise them into a ``summary``
memory (dated like them, so it never displaces the rolling summary), invalidates their verbatim
memories (raw turns, episodic memories; each change in its history) and removes their vectors,
marks the episodes consolidated (they stay, with a link to the pass), and sweeps the entities
whose every provenance episode is now consolidated, with their relationships. It is:

- a dry run unless ``run=True``: the report lists exactly what a run would change;
- one transaction when run, refused with ``Conflict`` if the store changed since it was
  planned (so a run never does more than its plan);
- idempotent: consolidated episodes are no longer candidates, so a second run is a no-op;
- reversible: ``revert_consolidation(report.id)`` restores all of it from the recorded pass.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from omoide.config import KnowledgeConfig
from omoide.engine.shared.embedding import Embedding, index
from omoide.engine.shared.job_signal import JobSignal
from omoide.errors import Conflict, InvalidInput, OmoideError
from omoide.extract import summarize
from omoide.jobs.kinds import (
    CONSOLIDATE,
    EMBED,
    EMBED_ENTITIES,
    ConsolidatePayload,
    EmbedEntitiesPayload,
    EmbedPayload,
)
from omoide.jobs.queue import enqueue
from omoide.llm import LLM, require_llm
from omoide.llm.protocol import MeteredLLM
from omoide.store.ports.consolidation import ConsolidationReads
from omoide.store.ports.sessions import SessionReads
from omoide.store.protocol import ConsolidationPlan, EpisodeStat, NewMemory, Transactions
from omoide.types import (
    DEFAULT_ID,
    ConsolidationCandidate,
    ConsolidationCandidates,
    ConsolidationReport,
    Episode,
    Job,
    MemoryType,
    Message,
    Scope,
    dt_to_ms,
    ms_to_dt,
    now_ms,
)

MAX_CHARS = 60_000  # of episode text summarised in one pass (one LLM prompt)
ACTOR = "consolidation"
DAY_MS = 86_400_000


def score_episodes(
    stats: Sequence[EpisodeStat], now: int, min_age_days: float
) -> list[ConsolidationCandidate]:
    """The open episodes at least ``min_age_days`` old, scored, most eligible first."""
    cutoff = now - min_age_days * DAY_MS
    out = []
    for stat in stats:
        if stat.consolidated or stat.created_ms > cutoff:
            continue
        last = stat.last_accessed_ms or stat.created_ms
        days = max(0.0, (now - last) / DAY_MS)
        out.append(
            ConsolidationCandidate(
                episode_id=stat.episode_id,
                score=stat.access_count / (1 + days) if stat.access_count else 0.0,
                access_count=stat.access_count,
                last_accessed_at=ms_to_dt(stat.last_accessed_ms),
                created_at=datetime.fromtimestamp(stat.created_ms / 1000, tz=UTC),
            )
        )
    out.sort(key=lambda c: (c.score, c.created_at, c.episode_id))
    return out


class ConsolidationService:
    def __init__(
        self,
        session_reads: SessionReads,
        consolidation_reads: ConsolidationReads,
        transactions: Transactions,
        embedding: Embedding,
        llm: LLM | None,
        signal: JobSignal,
        knowledge: KnowledgeConfig,
    ) -> None:
        self._session_reads = session_reads
        self._consolidation_reads = consolidation_reads
        self._transactions = transactions
        self._embedding = embedding
        self._llm = llm
        self._signal = signal
        self._knowledge = knowledge

    def consolidation_candidates(
        self,
        session_id: str,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        min_age_days: float | None = None,
        min_session_episodes: int | None = None,
        limit: int = 100,
    ) -> ConsolidationCandidates:
        """A session's episodes ranked for consolidation; observe-only (nothing changes)."""
        scope = Scope(user_id=user_id, scope_id=scope_id)
        age = self._knowledge.min_age_days if min_age_days is None else min_age_days
        floor = self._knowledge.min_session_episodes
        floor = floor if min_session_episodes is None else min_session_episodes
        if age < 0 or floor < 1 or limit < 1:
            raise InvalidInput("min_age_days >= 0, min_session_episodes >= 1 and limit >= 1")
        stats = self._consolidation_reads.episode_stats(scope, session_id)
        count = sum(1 for s in stats if not s.consolidated)
        out = ConsolidationCandidates(session_id=session_id, eligible=False, episode_count=count)
        if count < floor:
            out.reason = f"{count} open episodes; consolidation needs at least {floor}"
            return out
        out.eligible = True
        out.candidates = score_episodes(stats, now_ms(), age)[:limit]
        return out

    def consolidate(
        self,
        session_id: str,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        run: bool = False,
        max_score: float | None = None,
        min_age_days: float | None = None,
        min_session_episodes: int | None = None,
        limit: int | None = None,
    ) -> ConsolidationReport:
        """Report (by default) or carry out (``run=True``, needs an LLM) the consolidation of
        a session's low-value old episodes; see the module doc.

            >>> m.consolidate("chat-1", user_id="alice").episodes        # dry run
            ['a1...', 'b2...']
            >>> report = m.consolidate("chat-1", user_id="alice", run=True)
            >>> m.revert_consolidation(report.id, user_id="alice")
        """
        scope = Scope(user_id=user_id, scope_id=scope_id)
        ranked = self.consolidation_candidates(
            session_id,
            user_id=user_id,
            scope_id=scope_id,
            min_age_days=min_age_days,
            min_session_episodes=min_session_episodes,
            limit=1_000_000,
        )
        report = ConsolidationReport(
            session_id=session_id, dry_run=not run, eligible=ranked.eligible, reason=ranked.reason
        )
        ceiling = self._knowledge.max_score if max_score is None else max_score
        batch = limit or self._knowledge.consolidation_batch
        chosen = [c for c in ranked.candidates if c.score <= ceiling]
        chosen = sorted(chosen[:batch], key=lambda c: (c.created_at, c.episode_id))
        episodes = _within(
            [self._session_reads.get_episode(scope, c.episode_id) for c in chosen], MAX_CHARS
        )
        plan = self._consolidation_reads.consolidation_plan(scope, [e.id for e in episodes])
        report = report.model_copy(update=_plan_fields(plan))
        if not run or not episodes:
            return report
        self._run(scope, session_id, episodes, plan, report)
        self._signal.wake()
        return report

    def _run(
        self,
        scope: Scope,
        session_id: str,
        episodes: list[Episode],
        plan: ConsolidationPlan,
        report: ConsolidationReport,
    ) -> None:
        """Summarise the planned episodes and apply the plan, in one transaction that refuses
        a store changed since the plan; fills in the report's id and summary."""
        llm = MeteredLLM(require_llm(self._llm, "consolidation"))
        messages = [m for e in episodes for m in e.messages] or [Message(content="(empty)")]
        text = summarize(llm, messages, None)
        vectors = self._embedding.try_embed([text])
        report.id = uuid.uuid4().hex
        new = NewMemory(
            text=text,
            type=MemoryType.SUMMARY,
            session_id=session_id,
            metadata={"summary_kind": "consolidation", "consolidation_id": report.id},
            source_episodes=plan.episodes,
            valid_from_ms=dt_to_ms(episodes[0].created_at),
            created_at_ms=dt_to_ms(episodes[-1].created_at),
        )
        with self._transactions.transaction() as tx:
            if tx.consolidation.consolidation_plan(scope, plan.episodes) != plan:
                raise Conflict(f"session {session_id!r} changed since it was planned; run again")
            summary = tx.memories.insert_memory(scope, new, ACTOR)
            index(tx, scope, [summary.id], vectors)
            report.summary_id, report.summary = summary.id, text
            tx.consolidation.apply_consolidation(
                scope, session_id, report.id, plan, report.model_dump(mode="json"), ACTOR
            )
            usage = llm.usage
            tx.variables.add_usage(
                scope, usage.prompt_tokens, usage.completion_tokens, usage.requests, now_ms()
            )

    def revert_consolidation(
        self, consolidation_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> dict[str, Any]:
        """Undo a consolidation pass: its memories are valid (and re-embedded) again, its
        episodes open, its summary invalidated, its swept entities and relationships back.
        Returns ``{"memories", "entities", "summary_id"}``."""
        scope = Scope(user_id=user_id, scope_id=scope_id)
        with self._transactions.transaction() as tx:
            restored = tx.consolidation.revert_consolidation(scope, consolidation_id, ACTOR)
            if restored["memories"]:
                enqueue(tx.jobs, scope, EMBED, EmbedPayload(memory_ids=restored["memories"]))
            if restored["entities"]:
                entities = EmbedEntitiesPayload(entity_ids=restored["entities"])
                enqueue(tx.jobs, scope, EMBED_ENTITIES, entities)
        self._signal.wake()
        return restored

    def schedule_consolidation(
        self,
        session_id: str,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        max_score: float | None = None,
    ) -> int:
        """Queue a consolidation run of a session as a durable job; return its id. The job's
        result is the run's report."""
        scope = Scope(user_id=user_id, scope_id=scope_id)
        self._session_reads.get_session(scope, session_id)
        payload = ConsolidatePayload(session_id=session_id, max_score=max_score)
        with self._transactions.transaction() as tx:
            job_id = enqueue(tx.jobs, scope, CONSOLIDATE, payload)
        self._signal.wake()
        return job_id

    def run_jobs(self, batch: Sequence[tuple[Job, ConsolidatePayload]]) -> dict[int, BaseException]:
        """The ``consolidate`` handler: each job's result is its run's report."""
        errors: dict[int, BaseException] = {}
        for job, payload in batch:
            try:
                report = self.consolidate(
                    payload.session_id,
                    user_id=job.user_id,
                    scope_id=job.scope_id,
                    run=True,
                    max_score=payload.max_score,
                )
            except OmoideError as exc:
                errors[job.id] = exc
            else:
                with self._transactions.transaction() as tx:
                    tx.jobs.finish_job(job.id, report.model_dump(mode="json"))
        return errors


def _within(episodes: list[Episode], max_chars: int) -> list[Episode]:
    """The first episodes whose messages add up to at most ``max_chars`` (at least one)."""
    kept: list[Episode] = []
    total = 0
    for episode in episodes:
        total += sum(len(m.content) for m in episode.messages)
        if kept and total > max_chars:
            break
        kept.append(episode)
    return kept


def _plan_fields(plan: ConsolidationPlan) -> dict[str, list[str]]:
    return {
        "episodes": list(plan.episodes),
        "memories": list(plan.memories),
        "vectors": list(plan.vectors),
        "entities": list(plan.entities),
        "relationships": list(plan.relationships),
    }
