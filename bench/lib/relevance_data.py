"""The shapes of memory ``bench/relevance.py`` measures and fits on, ingested through ``Memory``.

* ``locomo``: LoCoMo dev, one tenant per conversation, each session one ``add`` of its turns
  (``<speaker>: <text>``) as chat messages with the session's id and date; evidence = the
  question's ``dia_id``s. Questions of the other conversation are its never-said questions.
* ``longmemeval``: LongMemEval dev, one tenant per question, each haystack session one ``add``
  of its turns (``<role>: <content>``) with the session's id and date; evidence = the
  ``has_answer`` turns (abstention questions are never-said questions).
* ``facts``: standalone facts, one ``add`` of a plain text each, a second apart, no session;
  questions as an agent asks them, and questions about things never said. Read from
  ``bench/data/facts/*.json`` (``{"tenant", "facts": [{"key", "text"}], "questions": [{"query",
  "answers": [key...]}]}``; no answers = never said).

Every add goes through a caching embedder (``bench/embed_cache.py``), so later runs embed nothing.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from lib.common import load_locomo, session_time_ms
from omoide import Memory

SHARED = Path(__file__).resolve().parents[3] / "shared" / "datasets"
if not SHARED.exists():
    SHARED = Path("/work/shared/datasets")
LOCOMO = SHARED / "locomo-dev"
LONGMEMEVAL = SHARED / "longmemeval-dev" / "longmemeval_s_dev65.jsonl.gz"
FACTS = Path(__file__).resolve().parent.parent / "data" / "facts"


@dataclass
class Query:
    tenant: str
    text: str
    relevant: set[str]  # memory ids; empty for a never-said question
    kind: str = ""
    ignore: set[str] = field(default_factory=set)  # neither relevant nor wrong
    # LongMemEval: each turn's session and the answer's sessions (session recall_all@k)
    session_of: dict[str, str] = field(default_factory=dict)
    answer_sessions: set[str] = field(default_factory=set)


@dataclass
class Shape:
    name: str
    queries: list[Query] = field(default_factory=list)


def _ms(at: datetime) -> datetime:
    return at if at.tzinfo else at.replace(tzinfo=UTC)


def ingest_locomo(memory: Memory, path: Path = LOCOMO) -> Shape:
    shape = Shape("locomo")
    convs = load_locomo(path)
    by_dia: dict[str, dict[str, str]] = {}
    for conv in convs:
        ids = by_dia.setdefault(conv.sample_id, {})
        for n, date, turns in conv.sessions:
            at_ms = session_time_ms(date)
            at = datetime.fromtimestamp(at_ms / 1000, UTC) if at_ms else None
            items = memory.add(
                [{"role": "user", "content": t.text} for t in turns],
                user_id=conv.sample_id,
                session_id=f"session_{n}",
                timestamp=at,
                infer=False,
            )
            ids.update({t.dia_id: item.id for t, item in zip(turns, items, strict=True)})
    for conv in convs:
        for q in conv.questions:
            relevant = {by_dia[conv.sample_id][d] for d in q.evidence}
            shape.queries.append(Query(conv.sample_id, q.question, relevant, str(q.category)))
    # each conversation's questions asked to the other: nothing there is about them
    for conv in convs:
        others = [c.sample_id for c in convs if c.sample_id != conv.sample_id]
        for q in conv.questions[::3]:
            shape.queries += [Query(o, q.question, set(), "never") for o in others]
    return shape


def ingest_locomo_sessions(memory: Memory, path: Path = LOCOMO) -> Shape:
    """LoCoMo dev with each session a tenant of its own (tens of turns, not hundreds): a
    question whose evidence lies in one session is asked of it; every third question of the
    other conversation is asked of each session as a never-said one."""
    shape = Shape("locomo_sessions")
    convs = load_locomo(path)
    for conv in convs:
        where: dict[str, tuple[str, str]] = {}
        for n, date, turns in conv.sessions:
            at_ms = session_time_ms(date)
            at = datetime.fromtimestamp(at_ms / 1000, UTC) if at_ms else None
            tenant = f"{conv.sample_id}-s{n}"
            items = memory.add(
                [{"role": "user", "content": t.text} for t in turns],
                user_id=tenant,
                session_id=f"session_{n}",
                timestamp=at,
                infer=False,
            )
            where.update({t.dia_id: (tenant, i.id) for t, i in zip(turns, items, strict=True)})
            others = [q for c in convs if c is not conv for q in c.questions[::3]]
            shape.queries += [Query(tenant, q.question, set(), "never") for q in others[n::10]]
        for q in conv.questions:
            tenants = {where[d][0] for d in q.evidence if d in where}
            if len(tenants) == 1 and all(d in where for d in q.evidence):
                relevant = {where[d][1] for d in q.evidence}
                shape.queries.append(Query(tenants.pop(), q.question, relevant, str(q.category)))
    return shape


def _lme_time(text: str) -> datetime:
    return datetime.strptime(text.split(" (")[0] + text.split(")")[1], "%Y/%m/%d %H:%M").replace(
        tzinfo=UTC
    )


def ingest_longmemeval(
    memory: Memory, path: Path = LONGMEMEVAL, every: int = 1, distractors: int = 0
) -> Shape:
    """Every ``every``-th question (types stay balanced: the file holds them in blocks); with
    ``distractors``, each haystack keeps its answer sessions and that many others (the first
    ones), a smaller haystack than the benchmark's (embedding all ~32k turns takes hours on a
    loaded machine)."""
    shape = Shape("longmemeval")
    with gzip.open(path, "rt") as lines:
        rows = [json.loads(line) for line in lines]
    for row in rows[::every]:
        tenant = row["question_id"]
        relevant: set[str] = set()
        session_of: dict[str, str] = {}
        answer_sessions = set(row["answer_session_ids"])
        kept = 0
        triples = zip(
            row["haystack_session_ids"],
            row["haystack_dates"],
            row["haystack_sessions"],
            strict=True,
        )
        for sid, date, turns in triples:
            turns = [t for t in turns if t.get("content", "").strip()]
            if not turns:
                continue
            if distractors and sid not in answer_sessions:
                if kept >= distractors:
                    continue
                kept += 1
            items = memory.add(
                [{"role": t["role"], "content": f"{t['role']}: {t['content']}"} for t in turns],
                user_id=tenant,
                session_id=str(sid),
                timestamp=_lme_time(date),
                infer=False,
            )
            relevant |= {i.id for t, i in zip(turns, items, strict=True) if t.get("has_answer")}
            session_of.update((i.id, str(sid)) for i in items)
        never = tenant.endswith("_abs")
        kind = "never" if never else row["question_type"]
        query = Query(tenant, row["question"], set() if never else relevant, kind)
        if not never:
            query.session_of, query.answer_sessions = session_of, set(map(str, answer_sessions))
        shape.queries.append(query)
    return shape


Folders = Path | Sequence[Path]


def fact_files(folder: Folders) -> list[Path]:
    """The tenant files of one folder or of several, in order."""
    folders = [folder] if isinstance(folder, Path) else list(folder)
    return [f for d in folders for f in sorted(d.glob("*.json"))]


def ingest_facts(memory: Memory, folder: Folders = FACTS) -> Shape:
    """Each file one tenant (format: ``bench/data/facts/README.md``); a fact's duplicates
    answer wherever it does, ``related`` facts count neither way (left out of ``ignore``)."""
    shape = Shape("facts")
    start = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
    for file in fact_files(folder):
        data: Any = json.loads(file.read_text())
        tenant = str(data["tenant"])
        keys: dict[str, str] = {}
        same: dict[str, set[str]] = {}
        for n, fact in enumerate(data["facts"]):
            (item,) = memory.add(
                fact["text"], user_id=tenant, timestamp=start + timedelta(seconds=n), infer=False
            )
            keys[fact["id"]] = item.id
            if dup := fact.get("duplicate_of"):
                same.setdefault(dup, {dup}).add(fact["id"])
                same[fact["id"]] = same[dup]
        for q in data["questions"]:
            answers = {f for a in q.get("answers") or [] for f in same.get(a, {a})}
            query = Query(
                tenant,
                q["question"],
                {keys[a] for a in answers},
                "answer" if answers else "never",
            )
            query.ignore = {keys[r] for r in q.get("related") or []} - query.relevant
            shape.queries.append(query)
    return shape


def _fact_files(folder: Folders) -> list[dict[str, Any]]:
    return [json.loads(f.read_text()) for f in fact_files(folder)]


def _answers(data: dict[str, Any], q: dict[str, Any]) -> set[str]:
    same: dict[str, set[str]] = {}
    for fact in data["facts"]:
        if dup := fact.get("duplicate_of"):
            same.setdefault(dup, {dup}).add(fact["id"])
            same[fact["id"]] = same[dup]
    return {f for a in q.get("answers") or [] for f in same.get(a, {a})}


def ingest_small_facts(memory: Memory, folder: Folders = FACTS, size: int = 8) -> Shape:
    """The fact tenants cut into tenants of ``size`` consecutive facts: a question is asked
    of the small tenant holding an answer to it (answerable there) and of the next one
    (never said there, unless it holds an answer too); never-said questions of the first."""
    shape = Shape("facts_small")
    start = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
    for data in _fact_files(folder):
        facts = data["facts"]
        blocks = [facts[i : i + size] for i in range(0, len(facts), size)]
        keys: list[dict[str, str]] = []
        for b, block in enumerate(blocks):
            tenant = f"{data['tenant']}-{b}"
            keys.append({})
            for n, fact in enumerate(block):
                at = start + timedelta(seconds=n)
                (item,) = memory.add(fact["text"], user_id=tenant, timestamp=at, infer=False)
                keys[b][fact["id"]] = item.id
        for q in data["questions"]:
            answers = _answers(data, q)
            holding = [b for b, k in enumerate(keys) if answers & set(k)] or [0]
            for b in {holding[0], (holding[0] + 1) % len(blocks)}:
                relevant = {keys[b][a] for a in answers if a in keys[b]}
                query = Query(f"{data['tenant']}-{b}", q["question"], relevant)
                query.kind = "answer" if relevant else "never"
                query.ignore = {keys[b][r] for r in q.get("related") or [] if r in keys[b]}
                query.ignore -= relevant
                shape.queries.append(query)
    return shape


def ingest_chat_facts(memory: Memory, folder: Folders = FACTS) -> Shape:
    """The fact tenants as a chat client without sessions writes them (mem0's shim without a
    ``run_id``, the library's ``add`` of messages): each fact one user message of its own add,
    a second apart, no session, so the facts are linked into one implicit conversation (each
    indexed with its neighbours' words) and scored as standalone memories. (The JiuwenMemory
    and MCP doors store a session when the client names none, so their facts are turns.)"""
    shape = Shape("facts_chat")
    start = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
    for data in _fact_files(folder):
        tenant = f"chat-{data['tenant']}"
        keys: dict[str, str] = {}
        for n, fact in enumerate(data["facts"]):
            (item,) = memory.add(
                [{"role": "user", "content": fact["text"]}],
                user_id=tenant,
                timestamp=start + timedelta(seconds=n),
                infer=False,
            )
            keys[fact["id"]] = item.id
        for q in data["questions"]:
            relevant = {keys[a] for a in _answers(data, q)}
            query = Query(tenant, q["question"], relevant, "answer" if relevant else "never")
            query.ignore = {keys[r] for r in q.get("related") or []} - relevant
            shape.queries.append(query)
    return shape


INGEST = {
    "locomo": ingest_locomo,
    "longmemeval": ingest_longmemeval,
    "facts": ingest_facts,
    "facts_small": ingest_small_facts,
    "locomo_sessions": ingest_locomo_sessions,
    "facts_chat": ingest_chat_facts,
}
