"""What an agent gets through each door on the fact-shaped tenants (``bench/data/facts``).

Every door (``/v1``, MCP, JiuwenMemory, mem0, the UI) returns ``Memory.search``'s ids and
scores for its recipe (tests/compat/test_same_search.py), so two searches cover them all: the
default recipe, and ``vector``, what JiuwenMemory's REST and MCP searches use while
``OMOIDE_JIUWEN_COSINE_THRESHOLD`` is true. Facts are added one plain text each, a second
apart, no session, as an agent's memory tool writes them. Per tenant and recipe, and over
all the tenants' questions (``all``):

* ``t``: the threshold: by default what a JiuwenMemory or MCP search sent without one uses
  for the recipe's score (``omoide.compat.jiuwen.common.default_threshold``), or ``--threshold``;
* ``hit@1``, ``hit@3``: an answer among the first 1 / 3 hits, no threshold;
* ``door@3``: an answer among the first 3 hits scored >= ``t``, what an MCP or JiuwenMemory
  client receives with its defaults;
* ``score>=t``: the best-ranked answer's own score is >= ``t``;
* ``never empty``: never-said questions with no hit scored >= ``t``.

    PYTHONPATH=. python bench/doors_facts.py [--threshold T] [--data bench/data/facts]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from lib.locomo_run import open_engine, warm_up

from omoide import Memory
from omoide.compat.jiuwen.common import default_threshold

DATA = Path(__file__).resolve().parent / "data" / "facts"
START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
RECIPES = (None, "vector")  # None: the server's default recipe


def ingest(memory: Memory, data: dict[str, Any], session: str | None) -> dict[str, str]:
    """The tenant's facts, one add each; fact id -> memory id. ``session``: the facts are
    one-message adds of that session (``""``: chat messages without a session, as MCP's and
    JiuwenMemory's ``add_messages`` store them when the client names none); ``None``: plain
    texts."""
    ids: dict[str, str] = {}
    for n, fact in enumerate(data["facts"]):
        said = START + timedelta(seconds=n)
        if session is None:
            (item,) = memory.add(fact["text"], user_id=data["tenant"], timestamp=said, infer=False)
        else:
            (item,) = memory.add_messages(
                [{"role": "user", "content": fact["text"]}],
                user_id=data["tenant"],
                session_id=session or None,
                timestamp=said,
                enable_long_term_mem=False,
            ).items
        ids[fact["id"]] = item.id
    return ids


def answers(data: dict[str, Any], question: dict[str, Any]) -> set[str]:
    """A question's answer facts with their duplicates (either one answers)."""
    same = {f["id"]: f["duplicate_of"] for f in data["facts"] if f.get("duplicate_of")}
    found = set(question["answers"])
    found |= {a for a, b in same.items() if b in found} | {same[a] for a in found if a in same}
    return found


def measure(
    memory: Memory, data: dict[str, Any], ids: dict[str, str], recipe: str | None, cut: float
) -> dict[str, int]:
    """Counts of each figure, and ``asked`` / ``never`` (answerable / never-said questions)."""
    counts = dict.fromkeys(("hit@1", "hit@3", "door@3", "score>=t", "never empty"), 0)
    asked = never = 0
    for question in data["questions"]:
        hits = memory.search(
            question["question"], user_id=data["tenant"], limit=10, recipe=recipe
        ).hits
        ranked = [(h.memory.id, h.score) for h in hits]
        wanted = {ids[a] for a in answers(data, question)}
        if not wanted:
            never += 1
            counts["never empty"] += all(score < cut for _, score in ranked)
            continue
        asked += 1
        first = [i for i, _ in ranked]
        counts["hit@1"] += bool(set(first[:1]) & wanted)
        counts["hit@3"] += bool(set(first[:3]) & wanted)
        counts["door@3"] += bool({i for i, s in ranked[:3] if s >= cut} & wanted)
        counts["score>=t"] += next((s >= cut for i, s in ranked if i in wanted), False)
    return {**counts, "asked": asked, "never": never}


def rates(counts: dict[str, int]) -> dict[str, float]:
    """Each figure as a share of the questions it counts (never-said ones for "never
    empty")."""
    return {
        name: round(value / max(1, counts["never" if name == "never empty" else "asked"]), 3)
        for name, value in counts.items()
        if name not in ("asked", "never")
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--threshold",
        type=float,
        default=None,
        help="the doors' cut; default: what a JiuwenMemory or MCP search sent without one uses",
    )
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument(
        "--session",
        default=None,
        help="write one-message chat adds in this session ('' for none) instead of texts",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        memory, timed = open_engine(Path(tmp) / "facts.db")
        warm_up(timed)
        rows = []
        pooled: dict[str, Counter[str]] = {recipe or "default": Counter() for recipe in RECIPES}
        for file in sorted(args.data.glob("*.json")):
            data = json.loads(file.read_text())
            ids = ingest(memory, data, args.session)
            for recipe in RECIPES:
                cut = default_threshold(recipe) if args.threshold is None else args.threshold
                counts = measure(memory, data, ids, recipe, cut)
                pooled[recipe or "default"].update(counts)
                name = recipe or "default"
                rows.append({"tenant": data["tenant"], "recipe": name, "t": cut, **rates(counts)})
        for name, counts in pooled.items():
            cut = rows[[r["recipe"] for r in rows].index(name)]["t"]
            rows.append({"tenant": "all", "recipe": name, "t": cut, **rates(dict(counts))})
        memory.close()
    names = list(rows[0])
    print(" | ".join(names))
    for row in rows:
        print(" | ".join(str(row[n]) for n in names))


if __name__ == "__main__":
    main()
