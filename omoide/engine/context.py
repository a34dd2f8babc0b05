"""Context assembly: what omoide knows for a query, as one block within a token budget.

The block has up to six sections, each line citing the id of what it shows. Budget goes to
them in priority order, each capped at a share of the budget, and whatever a section leaves
flows to the next:

1. **Recent turns** of the session (at most half): the recency floor. The newest turn is
   always there, cut short if it must be; older ones join while they fit, newest first.
2. **Conversation summary**: the session's rolling summary (at most a quarter, cut to fit).
3. **User profile** entries (15%) and **variables** (5%).
4. **Relevant memories**: hybrid search hits (facts, turns, chunks, summaries), best first,
   skipping ones that do not fit, leaving room for
5. **Knowledge graph**: relationships around the entities the query names (15%);
   then relevant memories again with whatever is left.

Selection is deterministic: the same store and arguments give the same block. Memories the
budget selected (not the recency floor) get one more access, with their source episodes, in
one write (``touch_episodes``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from omoide.config import KnowledgeConfig
from omoide.engine.graph import GraphService
from omoide.engine.search.service import SearchService
from omoide.errors import InvalidInput, NotFound
from omoide.retrieval.context import Line, Packer, load_counter
from omoide.store.ports.graph import GraphReads
from omoide.store.ports.memories import MemoryReads
from omoide.store.ports.sessions import SessionReads
from omoide.store.ports.variables import VariableReads
from omoide.store.protocol import Transactions
from omoide.types import (
    DEFAULT_ID,
    ContextItem,
    ContextResult,
    Entity,
    MemoryItem,
    MemoryType,
    Scope,
    SearchFilters,
    SearchHit,
    Subgraph,
    Variable,
    now_ms,
)
from omoide.validate import check_text

MIN_BUDGET = 100
MAX_BUDGET = 200_000
LAYOUT = [
    ("profile", "## User profile"),
    ("variables", "## Variables"),
    ("summary", "## Conversation summary"),
    ("memories", "## Relevant memories"),
    ("graph", "## Knowledge graph"),
    ("recent", "## Recent turns"),
]
SEARCHED = [MemoryType.RAW, MemoryType.SEMANTIC, MemoryType.EPISODIC]
SEARCHED += [MemoryType.SUMMARY, MemoryType.CHUNK]
PROFILE_MAX = 100
GRAPH_ENTITIES = 10
GRAPH_EDGES = 60


@dataclass
class _Gathered:
    recent: list[MemoryItem] = field(default_factory=list)  # newest first
    summary: MemoryItem | None = None
    profile: list[MemoryItem] = field(default_factory=list)
    variables: list[Variable] = field(default_factory=list)
    hits: list[SearchHit] = field(default_factory=list)
    named: list[Entity] = field(default_factory=list)
    graph: Subgraph | None = None
    warnings: list[str] = field(default_factory=list)


class ContextService:
    def __init__(
        self,
        memory_reads: MemoryReads,
        session_reads: SessionReads,
        graph_reads: GraphReads,
        variable_reads: VariableReads,
        transactions: Transactions,
        search: SearchService,
        graph: GraphService,
        knowledge: KnowledgeConfig,
        *,
        max_text_chars: int,
    ) -> None:
        self._memory_reads = memory_reads
        self._session_reads = session_reads
        self._graph_reads = graph_reads
        self._variable_reads = variable_reads
        self._transactions = transactions
        self._search = search
        self._graph = graph
        self._knowledge = knowledge
        self._max_text_chars = max_text_chars

    def context(
        self,
        query: str,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        session_id: str | None = None,
        token_budget: int = 2000,
        recent_turns: int | None = None,
        recipe: str | None = None,
        track_access: bool = True,
    ) -> ContextResult:
        """A ready-to-paste block of what is known for ``query``, never over ``token_budget``
        tokens (counted with the configured tokenizer), with its parts and their ids.

            >>> ctx = m.context("where does Mei live?", user_id="mei", session_id="chat-1")
            >>> print(ctx.text)
            ## Relevant memories
            - [3f2a...] (2026-11-29, semantic) Mei lives in Shenzhen
            ## Recent turns
            - [9c1d...] user: I'm Mei.
            >>> ctx.tokens <= 2000, [i.id for i in ctx.memories]
        """
        check_text(query, self._max_text_chars, what="query")
        if not isinstance(token_budget, int) or not MIN_BUDGET <= token_budget <= MAX_BUDGET:
            raise InvalidInput(
                f"token_budget must be between {MIN_BUDGET} and {MAX_BUDGET}, got {token_budget!r}"
            )
        turns = self._knowledge.recent_turns if recent_turns is None else recent_turns
        if not isinstance(turns, int) or not 0 <= turns <= 100:
            raise InvalidInput(f"recent_turns must be between 0 and 100, got {turns!r}")
        scope = Scope(user_id=user_id, scope_id=scope_id)
        found = self._gather(scope, query, session_id, turns, token_budget, recipe)
        counter = load_counter(self._knowledge.tokenizer)
        packer = Packer(token_budget, counter, LAYOUT)
        _pack(packer, found)
        text, tokens = packer.finish(keep_first=1 if packer.picked["recent"] else 0)
        if counter.name != self._knowledge.tokenizer:
            found.warnings.append(f"{self._knowledge.tokenizer} unavailable; tokens estimated")
        result = _result(packer, text, tokens, counter.name, found)
        if track_access:
            self._touch_selected(scope, result)
        return result

    def touch_memories(
        self, memory_ids: Sequence[str], *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> int:
        """One more access, now, for each memory and its source episodes; return how many
        rows changed (ids of other tenants change nothing)."""
        return self._touch(Scope(user_id=user_id, scope_id=scope_id), _ids(memory_ids), [])

    def touch_episodes(
        self, episode_ids: Sequence[str], *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> int:
        """One more access, now, for each episode (an episode in use is consolidated later)."""
        return self._touch(Scope(user_id=user_id, scope_id=scope_id), [], _ids(episode_ids))

    def _touch(self, scope: Scope, memory_ids: list[str], episode_ids: list[str]) -> int:
        if not memory_ids and not episode_ids:
            return 0
        with self._transactions.transaction() as tx:
            return tx.access.touch(scope, memory_ids, episode_ids, now_ms())

    def _touch_selected(self, scope: Scope, result: ContextResult) -> None:
        chosen = [*result.profile, *([result.summary] if result.summary else []), *result.memories]
        self._touch(scope, [item.id for item in chosen], [])

    def _gather(
        self,
        scope: Scope,
        query: str,
        session_id: str | None,
        turns: int,
        budget: int,
        recipe: str | None,
    ) -> _Gathered:
        found = _Gathered()
        project = None
        if session_id is not None:
            try:  # an isolated project's session sees its own project only
                project = self._session_reads.get_session(scope, session_id).project
            except NotFound:
                session_id = None  # nothing stored yet: no floor, no summary
        if session_id is not None:
            if turns:
                only = SearchFilters(session_id=session_id, types=[MemoryType.RAW], project=project)
                found.recent = self._memory_reads.latest_memories(scope, only, turns)
            only = SearchFilters(session_id=session_id, types=[MemoryType.SUMMARY], project=project)
            latest = self._memory_reads.latest_memories(scope, only, 1)
            found.summary = latest[0] if latest else None
        only = SearchFilters(types=[MemoryType.USER_PROFILE], project=project)
        found.profile = self._memory_reads.latest_memories(scope, only, PROFILE_MAX)
        found.variables = self._variable_reads.get_variables(scope, None)
        hits = self._search.search(
            query,
            user_id=scope.user_id,
            scope_id=scope.scope_id,
            filters=SearchFilters(types=SEARCHED, project=project),
            limit=max(20, min(500, budget // 25)),
            recipe=recipe,
        )
        found.warnings += hits.warnings
        shown = {m.id for m in found.recent} | ({found.summary.id} if found.summary else set())
        found.hits = [h for h in hits.hits if h.memory.id not in shown]
        found.named = self._graph.entities_named(scope, query, GRAPH_ENTITIES, contained=False)
        if found.named:
            ids = [e.id for e in found.named]
            found.graph = self._graph_reads.neighbors(scope, ids, GRAPH_EDGES * 2)
        return found


def _pack(packer: Packer, found: _Gathered) -> None:
    total = packer.total
    for position, item in enumerate(found.recent):
        line = Line(item.id, "memory", "recent", _turn(item), rank=-position)
        line.prefix = _turn(item, body=False) if position == 0 else None
        if not packer.add(line, total // 2):
            packer.dropped += len(found.recent) - position
            break
    packer.picked["recent"].sort(key=lambda line: line.rank)
    if found.summary is not None:
        item = found.summary
        line = Line(item.id, "memory", "summary", f"[{item.id}] {_flat(item.text)}")
        line.prefix = f"[{item.id}] "
        _offer(packer, [line], total // 4)
    profile = [_memory_line(m, "profile", i) for i, m in enumerate(found.profile)]
    _offer(packer, profile, total * 15 // 100)
    variables = [
        Line(f"var:{v.name}", "variable", "variables", f"- {v.name}: {_flat(str(v.value))}")
        for v in found.variables
    ]
    _offer(packer, variables, total * 5 // 100)
    memories = [_memory_line(h.memory, "memories", i, h.score) for i, h in enumerate(found.hits)]
    graph = _graph_lines(found)
    need = sum(packer.count(g.text) + 1 for g in graph)
    reserve = min(total * 15 // 100, need + (4 if graph else 0))
    skipped = _offer(packer, memories, packer.left - reserve)
    _offer(packer, graph, total * 15 // 100)
    packer.dropped -= len(skipped)
    _offer(packer, skipped, packer.left)
    packer.picked["memories"].sort(key=lambda line: line.rank)


def _offer(packer: Packer, lines: list[Line], cap: int) -> list[Line]:
    """Add each line that fits in ``cap``; return (and count as dropped) the others."""
    skipped = [line for line in lines if not packer.add(line, cap)]
    packer.dropped += len(skipped)
    return skipped


def _memory_line(item: MemoryItem, section: str, rank: int, score: float | None = None) -> Line:
    if section == "profile":
        return Line(item.id, "memory", section, f"- [{item.id}] {_flat(item.text)}", rank=rank)
    label = item.type.value if item.type is not MemoryType.RAW else item.metadata.get("role")
    tag = item.valid_from.date().isoformat() + (f", {label}" if label else "")
    text = f"- [{item.id}] ({tag}) {_flat(item.text)}"
    return Line(item.id, "memory", section, text, score=score, rank=rank)


def _turn(item: MemoryItem, *, body: bool = True) -> str:
    role = item.metadata.get("role")
    head = f"- [{item.id}] " + (f"{role}: " if isinstance(role, str) and role else "")
    return head + _flat(item.text) if body else head


def _graph_lines(found: _Gathered) -> list[Line]:
    if found.graph is None:
        return []
    edges = sorted(
        found.graph.edges,
        key=lambda r: (-r.mention_count, r.from_name.casefold(), r.label, r.to_name, r.id),
    )[:GRAPH_EDGES]
    lines = []
    for rel in edges:
        notes = f" ({_flat(rel.notes)})" if rel.notes else ""
        text = f"- [{rel.id}] {rel.from_name} -[{rel.label}]-> {rel.to_name}{notes}"
        lines.append(Line(rel.id, "relationship", "graph", text))
    linked = {end for r in edges for end in (r.from_id, r.to_id)}
    for entity in found.named:
        if entity.id not in linked:
            text = f"- [{entity.id}] {entity.name} ({entity.type})"
            lines.append(Line(entity.id, "entity", "graph", text))
    return lines


def _result(
    packer: Packer, text: str, tokens: int, tokenizer: str, found: _Gathered
) -> ContextResult:
    def items(section: str) -> list[ContextItem]:
        return [
            ContextItem(
                id=line.id,
                kind=line.kind,
                section=section,
                text=line.text,
                tokens=line.tokens,
                score=line.score,
            )
            for line in packer.picked[section]
        ]

    summary = items("summary")
    return ContextResult(
        text=text,
        tokens=tokens,
        token_budget=packer.total,
        tokenizer=tokenizer,
        profile=items("profile"),
        variables=items("variables"),
        summary=summary[0] if summary else None,
        memories=items("memories"),
        graph=items("graph"),
        recent=items("recent"),
        dropped=packer.dropped,
        degraded=bool(found.warnings),
        warnings=found.warnings,
    )


def _flat(text: str) -> str:
    """One line: every run of whitespace becomes one space."""
    return " ".join(text.split())


def _ids(ids: Sequence[str]) -> list[str]:
    if isinstance(ids, str) or not isinstance(ids, Sequence):
        raise InvalidInput("ids must be a list of ids")
    if len(ids) > 10_000:
        raise InvalidInput("at most 10000 ids at once")
    return sorted({str(i) for i in ids})
