"""Building and searching a LoCoMo store the way bench/locomo.py measures it: the timed
embedder, one ``add_many`` per session, every question through every recipe (interleaved)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lib.common import (
    KS,
    Conversation,
    aggregate,
    percentiles_ms,
    score_question,
    session_time_ms,
    table,
)
from omoide import Memory, NewMemory
from omoide.config import Settings
from omoide.embed import build_embedder


class TimedEmbedder:
    """Wraps an embedder and adds up the time spent in it."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self.seconds = 0.0
        self.texts = 0

    def embed(self, texts: Sequence[str]) -> Any:
        start = time.perf_counter()
        vectors = self.inner.embed(texts)
        self.seconds += time.perf_counter() - start
        self.texts += len(texts)
        return vectors


def open_engine(db_path: Path, embedder: Any = None) -> tuple[Memory, TimedEmbedder]:
    """A ``Memory`` on ``db_path`` with the default embedder (timed), no background workers."""
    timed = TimedEmbedder(embedder or build_embedder(Settings()))
    return Memory(db_path, embedder=timed, workers=0), timed


def warm_up(timed: TimedEmbedder) -> float:
    """Load the model before anything is timed; return the load time."""
    start = time.perf_counter()
    timed.inner.embed(["warm up the model"])
    return time.perf_counter() - start


def session_records(
    conv: Conversation, context: str = "engine", sessions: bool = True
) -> list[list[NewMemory]]:
    """One list of memories per session, in order; each turn's time is its session's date.

    ``sessions=False`` leaves out the session id (and the session's number and date in the
    metadata): the engine must link the turns into conversations from their times alone.
    ``context`` is for experiments only: ``engine`` leaves it to the engine (previous and next
    turn), ``none`` disables it (a blank context makes the engine skip its neighbour logic),
    ``prev`` gives each turn only the previous turn.
    """
    out = []
    for n, date, turns in conv.sessions:
        records = []
        at = session_time_ms(date)
        for i, t in enumerate(turns):
            ctx = ""
            if context == "none":
                ctx = " "
            elif context == "prev":
                ctx = turns[i - 1].text[:1000] if i else " "
            meta: dict[str, Any] = {"dia_id": t.dia_id}
            if sessions:
                meta.update(session=n, session_date=date)
            records.append(
                NewMemory(
                    text=t.text,
                    session_id=f"session_{n}" if sessions else None,
                    metadata=meta,
                    context=ctx,
                    created_at_ms=at,
                )
            )
        out.append(records)
    return out


def ingest(
    engine: Memory,
    timed: TimedEmbedder,
    convs: list[Conversation],
    batch: int = 0,
    context: str = "engine",
    with_sessions: bool = True,
) -> dict[str, Any]:
    """``add_many`` once per session (``batch=0``) or per ``batch`` turns of a conversation
    (spanning sessions), in session order. Times everything, embedding included."""
    groups = []
    for conv in convs:
        sessions = session_records(conv, context, with_sessions)
        if batch:
            flat = [r for records in sessions for r in records]
            sessions = [flat[i : i + batch] for i in range(0, len(flat), batch)]
        groups += [(conv.sample_id, records) for records in sessions]
    items = sum(len(records) for _, records in groups)
    embed_before = timed.seconds
    cpu_before = time.process_time()
    start = time.perf_counter()
    for user_id, records in groups:
        engine.add_many(records, user_id=user_id)
    seconds = time.perf_counter() - start
    cpu = time.process_time() - cpu_before
    embed_seconds = timed.seconds - embed_before
    return {
        "items": items,
        "add_many_calls": len(groups),
        "batch": batch or "session",
        "seconds": seconds,
        "items_per_s": items / seconds,
        "cpu_seconds": cpu,
        "embed_seconds": embed_seconds,
        "store_seconds": seconds - embed_seconds,
        "store_items_per_s": items / max(seconds - embed_seconds, 1e-9),
    }


def evaluate(
    engine: Memory,
    timed: TimedEmbedder,
    convs: list[Conversation],
    recipes: list[str],
    limit: int = 20,
) -> dict[str, Any]:
    """Run every question through every recipe (interleaved); metrics and latency per recipe."""
    # a few untimed queries first: first-query costs (cache loads, lazy imports) are not latency
    for conv in convs:
        for recipe in recipes:
            engine.search("warm up", user_id=conv.sample_id, limit=limit, recipe=recipe)
    rows: dict[str, list[dict[str, float]]] = {r: [] for r in recipes}
    lat: dict[str, list[float]] = {r: [] for r in recipes}
    embed_lat: dict[str, list[float]] = {r: [] for r in recipes}
    questions = []
    for conv in convs:
        for q in conv.questions:
            questions.append(q)
            turn = len(questions) % len(recipes)  # rotate which recipe runs first
            for recipe in recipes[turn:] + recipes[:turn]:
                before = timed.seconds
                start = time.perf_counter()
                result = engine.search(
                    q.question, user_id=conv.sample_id, limit=limit, recipe=recipe
                )
                lat[recipe].append(time.perf_counter() - start)
                embed_lat[recipe].append(timed.seconds - before)
                retrieved = [str(h.memory.metadata.get("dia_id")) for h in result.hits]
                rows[recipe].append(score_question(q, retrieved))
    out = {}
    for recipe in recipes:
        summary = aggregate(questions, rows[recipe])
        summary["latency"] = percentiles_ms(lat[recipe])
        summary["latency_query_embedding"] = percentiles_ms(embed_lat[recipe])
        summary["per_question_recall@10"] = [r["recall@10"] for r in rows[recipe]]
        out[recipe] = summary
    return out


def results_table(results: dict[str, dict[str, Any]]) -> str:
    headers = ["recipe", *(f"R@{k}" for k in KS), "NDCG@10", "sessR@10", "p50 ms", "p95 ms"]
    rows = [
        [
            name,
            *(r[f"recall@{k}"] for k in KS),
            r["ndcg@10"],
            r["session_recall@10"],
            f"{r['latency']['p50_ms']:.1f}" if "latency" in r else "-",
            f"{r['latency']['p95_ms']:.1f}" if "latency" in r else "-",
        ]
        for name, r in results.items()
    ]
    return table(headers, rows)
