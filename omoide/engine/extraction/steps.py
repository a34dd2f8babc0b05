"""The steps of one extraction job, one function per memory type.

A step makes its LLM calls and embeds its texts first, outside any transaction, and returns an
``Apply``: the writes, run later inside the transaction that also records the step as done (see
``extraction.service``). So a step is never half applied, and a re-run never repeats one.
A step that has nothing to do raises ``SkipStep`` with the reason.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from omoide.engine.extraction import profile_merge
from omoide.engine.search.service import SearchService
from omoide.engine.shared.embedding import Embedding, index
from omoide.extract import (
    MemVariable,
    ProfileEntry,
    extract_facts,
    extract_graph,
    extract_profile,
    extract_variables,
    reconcile,
    summarize,
)
from omoide.jobs.kinds import EMBED_ENTITIES, EmbedEntitiesPayload
from omoide.jobs.queue import enqueue
from omoide.llm.protocol import LLM, Completion, MeteredLLM, T, Usage
from omoide.store.protocol import NewMemory, Store, Tx
from omoide.types import Job, MemoryType, Message, Scope, SearchFilters, entity_text

Apply = Callable[[Tx], str]

SIMILAR_PER_FACT = 5
SIMILAR_MAX = 20
KNOWN_PROFILE_MAX = 200


@dataclass(frozen=True)
class StepDeps:
    """What the steps use: the store, embedding, search (similar facts), and the write policy."""

    store: Store
    embedding: Embedding
    search: SearchService
    actor: str
    max_text_chars: int


class SkipStep(Exception):
    """The step has nothing to do (no session for a summary, the call budget is spent...)."""


@dataclass
class Context:
    """What every step of one job works from."""

    job: Job
    scope: Scope
    messages: list[Message]
    steps: list[str]
    episode_id: str | None = None
    session_id: str | None = None
    project: str | None = None
    at_ms: int = 0
    metadata: dict[str, Any] = field(default_factory=dict)
    variables: list[MemVariable] = field(default_factory=list)

    @property
    def today(self) -> str:
        """The day relative dates are read from: when the messages were said (the latest
        message time given), else when they were added. Imported history keeps its days."""
        said = [m.timestamp for m in self.messages if m.timestamp is not None]
        return (max(said) if said else self.job.created_at).date().isoformat()

    def derived(self, text: str, type_: MemoryType, step: str, **extra: Any) -> NewMemory:
        """A memory this job writes: provenance, session and validity from the episode."""
        metadata = {**self.metadata, **extra, "extraction_job": self.job.id, "extracted_by": step}
        return NewMemory(
            text=text,
            type=type_,
            metadata=metadata,
            session_id=self.session_id,
            source_episodes=[self.episode_id] if self.episode_id else [],
            valid_from_ms=self.at_ms,
        )


class BudgetedLLM:
    """Meters an LLM and refuses calls past ``allowed`` (a repair request is part of its call)."""

    def __init__(self, llm: LLM, allowed: int, limit: int) -> None:
        self.name = llm.name
        self.calls = 0
        self._allowed = allowed
        self._limit = limit
        self._metered = MeteredLLM(llm)

    @property
    def usage(self) -> Usage:
        return self._metered.usage

    def complete_json(self, system: str, user: str, schema: type[T]) -> Completion[T]:
        if self.calls >= self._allowed:
            raise SkipStep(f"the LLM call budget ({self._limit} per episode) is spent")
        self.calls += 1
        return self._metered.complete_json(system, user, schema)


def episodic(deps: StepDeps, ctx: Context, _llm: LLM) -> Apply:
    """The exchange itself, verbatim, as one episodic memory (no LLM call)."""
    text = "\n".join(f"{m.role}: {m.content}" for m in ctx.messages)[: deps.max_text_chars]
    vectors = deps.embedding.try_embed([text])

    def apply(tx: Tx) -> str:
        item = tx.memories.insert_memory(
            ctx.scope, ctx.derived(text, MemoryType.EPISODIC, "episodic"), deps.actor
        )
        index(tx, ctx.scope, [item.id], vectors)
        return "1 memory"

    return apply


def semantic(deps: StepDeps, ctx: Context, llm: LLM) -> Apply:
    """Facts, reconciled with similar valid facts: ADD, UPDATE (supersede), DELETE, NOOP."""
    facts = extract_facts(llm, ctx.messages, today=ctx.today)
    if not facts:
        raise SkipStep("no facts stated")
    ops = reconcile(llm, facts, similar_facts(deps, ctx, facts))
    writes = [op for op in ops if op.op in ("ADD", "UPDATE")]
    vectors = deps.embedding.try_embed([op.text for op in writes]) if writes else None

    def apply(tx: Tx) -> str:
        ids = []
        for op in writes:
            new = ctx.derived(op.text, MemoryType.SEMANTIC, "semantic")
            if op.op == "ADD":
                item = tx.memories.insert_memory(ctx.scope, new, deps.actor)
            else:
                assert op.target_id is not None
                item = tx.memories.supersede_memory(
                    ctx.scope, op.target_id, new, ctx.at_ms, deps.actor
                )
            ids.append(item.id)
        for op in ops:
            if op.op == "DELETE" and op.target_id is not None:
                tx.memories.invalidate_memory(ctx.scope, op.target_id, ctx.at_ms, deps.actor)
        index(tx, ctx.scope, ids, vectors)
        counts = Counter(op.op for op in ops)
        return ", ".join(f"{counts[k]} {k}" for k in ("ADD", "UPDATE", "DELETE", "NOOP"))

    return apply


def similar_facts(deps: StepDeps, ctx: Context, facts: Sequence[str]) -> list[tuple[str, str]]:
    """Currently valid semantic memories of the tenant that look like any of ``facts``."""
    filters = SearchFilters(types=[MemoryType.SEMANTIC], project=ctx.project)
    found: dict[str, str] = {}
    for fact in facts:
        result = deps.search.search(
            fact,
            user_id=ctx.scope.user_id,
            scope_id=ctx.scope.scope_id,
            filters=filters,
            limit=SIMILAR_PER_FACT,
            recipe="vector",
        )
        for hit in result.hits:
            found.setdefault(hit.memory.id, hit.memory.text)
    return list(found.items())[:SIMILAR_MAX]


def profile(deps: StepDeps, ctx: Context, llm: LLM) -> Apply:
    """Profile entries, reconciled with the valid ones (``profile_merge``): a
    changed single-valued attribute supersedes its entry (history kept), repeats are skipped."""
    filters = SearchFilters(types=[MemoryType.USER_PROFILE], project=ctx.project)
    known, _ = deps.store.memories.list_memories(ctx.scope, filters, KNOWN_PROFILE_MAX, 0)
    entries = extract_profile(llm, ctx.messages, [item.text for item in known])
    todo = profile_merge.plan(entries, known)
    if todo.empty:
        raise SkipStep("nothing new about the user")
    texts = [e.text for e in todo.add] + [e.text for _, e in todo.update]
    vectors = deps.embedding.try_embed(texts)

    def new(entry: ProfileEntry) -> NewMemory:
        extra = {"attribute": entry.attribute, "value": entry.value}
        return ctx.derived(entry.text, MemoryType.USER_PROFILE, "profile", **extra)

    def apply(tx: Tx) -> str:
        ids = [tx.memories.insert_memory(ctx.scope, new(e), deps.actor).id for e in todo.add]
        for old, entry in todo.update:
            item = tx.memories.supersede_memory(
                ctx.scope, old.id, new(entry), ctx.at_ms, deps.actor
            )
            ids.append(item.id)
        for stray in todo.retire:
            tx.memories.invalidate_memory(ctx.scope, stray.id, ctx.at_ms, deps.actor)
        index(tx, ctx.scope, ids, vectors)
        return f"{len(todo.add)} added, {len(todo.update)} updated, {todo.unchanged} unchanged"

    return apply


def summary(deps: StepDeps, ctx: Context, llm: LLM) -> Apply:
    """The session's rolling summary: the previous one plus these messages supersede it."""
    if ctx.session_id is None:
        raise SkipStep("no session to summarise")
    filters = SearchFilters(types=[MemoryType.SUMMARY], session_id=ctx.session_id)
    previous, _ = deps.store.memories.list_memories(ctx.scope, filters, 1, 0)
    before = previous[0] if previous else None
    text = summarize(llm, ctx.messages, before.text if before else None)
    vectors = deps.embedding.try_embed([text])

    def apply(tx: Tx) -> str:
        new = ctx.derived(text, MemoryType.SUMMARY, "summary")
        if before is None:
            item = tx.memories.insert_memory(ctx.scope, new, deps.actor)
        else:
            item = tx.memories.supersede_memory(ctx.scope, before.id, new, ctx.at_ms, deps.actor)
        index(tx, ctx.scope, [item.id], vectors)
        return "updated" if before else "created"

    return apply


def variables(deps: StepDeps, ctx: Context, llm: LLM) -> Apply:
    """Declared variables the messages state, coerced to their types."""
    if not ctx.variables:
        raise SkipStep("no variables declared")
    current = {v.name: v.value for v in deps.store.variables.get_variables(ctx.scope, None)}
    values = extract_variables(llm, ctx.messages, ctx.variables, current)
    types: dict[str, str] = {v.name: v.type for v in ctx.variables}

    def apply(tx: Tx) -> str:
        typed = {name: (value, types[name]) for name, value in values.items()}
        tx.variables.set_variables(ctx.scope, typed, ctx.at_ms)
        return f"{len(typed)} set"

    return apply


def graph(deps: StepDeps, ctx: Context, llm: LLM) -> Apply:
    """Entities and relationships, upserted (mentions counted) with the episode as provenance."""
    entities, relationships = extract_graph(llm, ctx.messages)
    if not entities:
        raise SkipStep("no entities mentioned")
    vectors = deps.embedding.try_embed([entity_text(e.name, e.type) for e in entities])

    def apply(tx: Tx) -> str:
        ids = {}
        for entity in entities:
            stored = tx.graph.upsert_entity(
                ctx.scope, entity.name, entity.type, ctx.at_ms, ctx.episode_id
            )
            ids[entity] = stored.id
        if vectors is None:
            payload = EmbedEntitiesPayload(entity_ids=list(ids.values()))
            enqueue(tx.jobs, ctx.scope, EMBED_ENTITIES, payload)
        else:
            for row, entity_id in enumerate(ids.values()):
                tx.graph.put_entity_vector(ctx.scope, entity_id, vectors[row])
        for rel in relationships:
            tx.graph.upsert_relationship(
                ctx.scope, ids[rel.source], ids[rel.target], rel.label, rel.notes, ctx.at_ms
            )
        return f"{len(ids)} entities, {len(relationships)} relationships"

    return apply


StepFn = Callable[[StepDeps, Context, LLM], Apply]

# Run order: the free step first, then what the caller asked for by name, then by value.
STEPS: dict[str, StepFn] = {
    "episodic": episodic,
    "variables": variables,
    "semantic": semantic,
    "profile": profile,
    "summary": summary,
    "graph": graph,
}
