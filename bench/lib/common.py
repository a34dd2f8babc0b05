"""Shared helpers of the benchmarks: LoCoMo loading, evidence ids, metrics, timing.

Standard library only (no omoide, no numpy), so ``bench/mem0_baseline.py`` can import it from
the separate mem0 virtualenv and score mem0 exactly as omoide is scored.
"""

from __future__ import annotations

import json
import math
import os
import platform
import re
import resource
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent.parent
REPO_DIR = BENCH_DIR.parent
RESULTS_DIR = BENCH_DIR / "results"
# The LoCoMo dev conversations beside the checkout; BENCH_LOCOMO names another place (a worktree).
DEFAULT_DATA = Path(
    os.environ.get("BENCH_LOCOMO") or REPO_DIR.parent / "shared" / "datasets" / "locomo-dev"
)
KS = (1, 5, 10, 20)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}

_SESSION_KEY = re.compile(r"session_(\d+)")
# "D1:3", "D1: 3", "D:11:26", "D30:05", "d1:3" -> ("1", "3")
_DIA_ID = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)", re.IGNORECASE)


# LoCoMo -----------------------------------------------------------------------------------
@dataclass
class Turn:
    dia_id: str
    session: int
    session_date: str
    text: str


@dataclass
class Question:
    question: str
    category: int
    evidence: list[str]  # normalised ids that exist in the conversation
    unmatched: list[str]  # normalised ids that match no turn
    raw_evidence: list[str]


@dataclass
class Conversation:
    sample_id: str
    sessions: list[tuple[int, str, list[Turn]]]  # (n, date, turns) in session order
    questions: list[Question] = field(default_factory=list)
    skipped_adversarial: int = 0
    skipped_no_evidence: int = 0

    @property
    def turns(self) -> list[Turn]:
        return [t for _, _, turns in self.sessions for t in turns]


def normalise_dia_id(raw: str) -> list[str]:
    """All ``D<session>:<turn>`` ids in one evidence string, canonical (no zero padding)."""
    return [f"D{int(s)}:{int(t)}" for s, t in _DIA_ID.findall(raw)]


def session_time_ms(date: str) -> int | None:
    """A LoCoMo session date (``1:56 pm on 8 May, 2023``) as UTC epoch milliseconds."""
    try:
        parsed = datetime.strptime(date.strip(), "%I:%M %p on %d %B, %Y")
    except ValueError:
        return None
    return int(parsed.replace(tzinfo=UTC).timestamp() * 1000)


def turn_text(turn: dict[str, Any], date: str | None = None) -> str:
    """``<speaker>: <text>`` (+ `` [image: <caption>]``), optionally prefixed by the date."""
    text = f"{turn['speaker']}: {turn['text']}"
    if turn.get("blip_caption"):
        text += f" [image: {turn['blip_caption']}]"
    return f"[{date}] {text}" if date else text


def _parse_conversation(
    sample_id: str, conv: dict[str, Any], qa: list[dict[str, Any]], date_prefix: bool
) -> Conversation:
    numbers = sorted(int(m.group(1)) for k in conv if (m := _SESSION_KEY.fullmatch(k)))
    sessions = []
    for n in numbers:
        raw_turns = conv[f"session_{n}"] or []
        if not raw_turns:
            continue
        date = str(conv.get(f"session_{n}_date_time", ""))
        turns = [
            Turn(
                dia_id=normalise_dia_id(t["dia_id"])[0],
                session=n,
                session_date=date,
                text=turn_text(t, date if date_prefix else None),
            )
            for t in raw_turns
        ]
        sessions.append((n, date, turns))
    out = Conversation(sample_id=sample_id, sessions=sessions)
    known = {t.dia_id for t in out.turns}
    for q in qa:
        category = int(q.get("category", 0))
        if category == 5:
            out.skipped_adversarial += 1
            continue
        raw = [str(e) for e in q.get("evidence") or []]
        ids = list(dict.fromkeys(i for e in raw for i in normalise_dia_id(e)))
        matched = [i for i in ids if i in known]
        unmatched = [i for i in ids if i not in known]
        unmatched += [e for e in raw if not normalise_dia_id(e)]  # not even parseable
        if not matched and not unmatched:
            out.skipped_no_evidence += 1
            continue
        out.questions.append(Question(str(q["question"]), category, matched, unmatched, raw))
    return out


def load_locomo(path: Path | str, date_prefix: bool = False) -> list[Conversation]:
    """Conversations from a LoCoMo JSON file or a directory of them.

    Accepts the dev-set layout (one conversation per file, keys at top level) and the upstream
    ``locomo10.json`` layout (a list of ``{sample_id, conversation: {...}, qa: [...]}``).
    Only ``session_N`` turns are read: the authors' observations and summaries are not indexed.
    """
    path = Path(path)
    files = sorted(path.glob("*.json")) if path.is_dir() else [path]
    out = []
    for file in files:
        data = json.loads(file.read_text())
        samples = data if isinstance(data, list) else [data]
        for index, sample in enumerate(samples):
            if not isinstance(sample, dict) or "qa" not in sample:
                continue
            conv = sample.get("conversation", sample)
            default_id = file.stem if len(samples) == 1 else f"{file.stem}-{index}"
            sample_id = str(sample.get("sample_id") or default_id)
            out.append(_parse_conversation(sample_id, conv, sample["qa"], date_prefix))
    if not out:
        raise SystemExit(f"no LoCoMo conversation found in {path}")
    return out


# metrics ----------------------------------------------------------------------------------
def recall_at(retrieved: Sequence[str], relevant: Sequence[str], k: int) -> float:
    if not relevant:
        return 0.0
    top = set(retrieved[:k])
    return sum(1 for r in relevant if r in top) / len(relevant)


def ndcg_at(retrieved: Sequence[str], relevant: Sequence[str], k: int) -> float:
    rel = set(relevant)
    if not rel:
        return 0.0
    seen: set[str] = set()
    dcg = 0.0
    for rank, item in enumerate(retrieved[:k]):
        if item in rel and item not in seen:
            seen.add(item)
            dcg += 1.0 / math.log2(rank + 2)
    ideal = sum(1.0 / math.log2(r + 2) for r in range(min(len(rel), k)))
    return dcg / ideal


def session_of(dia_id: str) -> str:
    return dia_id.split(":")[0]


def score_question(q: Question, retrieved: Sequence[str]) -> dict[str, float]:
    """Per-question metrics; unmatched evidence ids count as misses (they can never be found)."""
    relevant = q.evidence + q.unmatched
    row = {f"recall@{k}": recall_at(retrieved, relevant, k) for k in KS}
    row["ndcg@10"] = ndcg_at(retrieved, relevant, 10)
    sessions = list(dict.fromkeys(session_of(r) for r in q.evidence))
    retrieved_sessions = [session_of(r) for r in retrieved[:10]]
    row["session_recall@10"] = (
        sum(1 for s in sessions if s in retrieved_sessions) / len(sessions) if sessions else 0.0
    )
    return row


def aggregate(questions: Sequence[Question], rows: Sequence[dict[str, float]]) -> dict[str, Any]:
    """Means over questions, and recall@10 per category."""
    out: dict[str, Any] = {"questions": len(rows)}
    for key in rows[0]:
        out[key] = statistics.fmean(r[key] for r in rows)
    per_cat = {}
    for cat, name in CATEGORIES.items():
        values = [r["recall@10"] for q, r in zip(questions, rows, strict=True) if q.category == cat]
        if values:
            per_cat[f"{cat} {name}"] = {"n": len(values), "recall@10": statistics.fmean(values)}
    out["per_category_recall@10"] = per_cat
    return out


def percentiles_ms(seconds: Sequence[float]) -> dict[str, float]:
    values = sorted(s * 1000 for s in seconds)
    if not values:
        return {"p50_ms": float("nan"), "p95_ms": float("nan"), "mean_ms": float("nan")}

    def pick(p: float) -> float:
        return values[min(len(values) - 1, round(p * (len(values) - 1)))]

    return {"p50_ms": pick(0.5), "p95_ms": pick(0.95), "mean_ms": statistics.fmean(values)}


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def peak_rss_mb() -> float:
    # ru_maxrss is in KiB on Linux.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def machine_note() -> dict[str, Any]:
    try:
        load = [round(x, 2) for x in __import__("os").getloadavg()]
    except OSError:
        load = []
    return {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": __import__("os").cpu_count(),
        "loadavg_at_start": load,
        "code": code_state(),
    }


def code_state() -> dict[str, Any]:
    """The commit measured, and whether omoide/ had uncommitted changes (read-only git)."""
    import hashlib
    import subprocess

    def git(*args: str) -> str:
        try:
            proc = subprocess.run(
                ["git", *args], cwd=REPO_DIR, capture_output=True, text=True, check=False
            )
        except OSError:
            return ""
        return proc.stdout.strip()

    digest = hashlib.sha256()
    for file in sorted((REPO_DIR / "omoide").rglob("*.py")) + sorted(
        (REPO_DIR / "omoide").rglob("*.sql")
    ):
        digest.update(file.read_bytes())
    return {
        "commit": git("rev-parse", "--short", "HEAD"),
        "omoide_dirty_files": len(git("status", "--porcelain", "omoide").splitlines()),
        "omoide_source_sha256": digest.hexdigest()[:16],
    }


def write_json(name: str, payload: dict[str, Any]) -> Path:
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / name
    path.write_text(json.dumps(payload, indent=2, sort_keys=False) + "\n")
    return path


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A Markdown table; floats get 3 decimals unless they are already strings."""

    def cell(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:.3f}" if abs(v) < 100 else f"{v:,.0f}"
        return str(v)

    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)
