"""LLM-free recall directions of issue 13, point 3, each measured against today's ``hybrid``.

    python bench/recall_directions.py [--data DIR] [--embed-cache FILE] [--variant k=v,k=v ...]

Every direction is a ``SearchRecipe`` option (omoide/retrieval/rerank.py) on top of the
``hybrid`` recipe, tried at a few values: the named speaker's turns boosted, turns said in a
period the question names boosted, pseudo-relevance feedback. Per value: recall@10, the paired
bootstrap 95% interval of its difference to ``hybrid`` (bench/paired.py), the difference per
conversation; per direction, a leave-one-conversation-out check (the value chosen on the other
conversation, scored on this one). ``--variant`` adds combinations. Also point 4: the same
questions on stores built without session ids, with and without the engine's implicit
conversations. Results: bench/results/recall_directions.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from common import DEFAULT_DATA, RESULTS_DIR, Conversation, load_locomo, table
from embed_cache import DiskCachedEmbedder
from locomo import evaluate, ingest, open_engine, warm_up
from paired import bootstrap, leave_one_out, per_group

from omoide.config import Settings
from omoide.embed import build_embedder
from omoide.retrieval.recipes import RECIPES

# what every difference is against: ``hybrid`` without the adjustments (before issue 13's recall
# work); ``hybrid`` itself (with the kept ones) is one more row.
BASE = "hybrid_plain"
PLAIN = {"speaker_boost": 0.0, "date_boost": 0.0, "feedback_terms": 0, "expansion_terms": 0}
DIRECTIONS: dict[str, list[dict[str, Any]]] = {
    "speaker": [{"speaker_boost": b} for b in (0.1, 0.25, 0.5, 1.0)],
    "date": [{"date_boost": b, "date_slack_days": d} for b in (0.5, 1.0, 2.0) for d in (14, 45)],
    "feedback": [
        {"feedback_terms": t, "feedback_weight": w} for t in (3, 5, 10) for w in (0.15, 0.3, 0.5)
    ],
    # on top of the kept speaker and date boosts (round 4)
    "expansion": [
        {
            "speaker_boost": 0.25,
            "date_boost": 1.0,
            "expansion_terms": m,
            "expansion_docs": n,
            "expansion_weight": w,
        }
        for m, n in ((1, 30), (3, 10), (3, 30), (3, 100))
        for w in (0.15, 0.3)
    ],
}


def tag(options: dict[str, Any]) -> str:
    return "x:" + ",".join(f"{k}={v}" for k, v in options.items())


def parse_variant(text: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for part in text.split(","):
        key, value = part.split("=")
        out[key] = float(value) if "." in value else int(value)
    return out


def register(options: dict[str, Any], name: str = "") -> str:
    name = name or tag(options)
    RECIPES[name] = RECIPES["hybrid"].model_copy(update={**PLAIN, **options, "name": name})
    return name


def run(args: argparse.Namespace) -> dict[str, Any]:
    convs = load_locomo(args.data)
    groups = [(c.sample_id, len(c.questions)) for c in convs]
    model = DiskCachedEmbedder(build_embedder(Settings()), args.embed_cache)
    register({}, BASE)
    chosen = args.directions.split(",") if args.directions else list(DIRECTIONS)
    names = {d: [register(o) for o in DIRECTIONS[d]] for d in chosen}
    kept = RECIPES["hybrid"]
    extra = [register({k: getattr(kept, k) for k in PLAIN}, "x:hybrid (kept)")]
    extra += [register(parse_variant(v)) for v in args.variant]
    names["combined"] = extra
    recipes = [BASE, *(n for ns in names.values() for n in ns), "hybrid"]
    with tempfile.TemporaryDirectory() as tmp:
        engine, timed = open_engine(Path(tmp) / "with.db", model)
        warm_up(timed)
        ingest(engine, timed, convs)
        results = evaluate(engine, timed, convs, recipes)
        engine.close()
        sessionless = without_sessions(Path(tmp), convs, model)
    model.save()
    per_q = {n: r["per_question_recall@10"] for n, r in results.items()}
    base = per_q[BASE]
    rows = []
    for name in recipes[1:-1]:  # the last, "hybrid", is "x:hybrid (kept)" again
        p = bootstrap(base, per_q[name], args.bootstrap)
        conv = per_group(per_q[name], groups)
        conv_base = per_group(base, groups)
        rows.append(
            {
                "variant": name,
                "recall@10": results[name]["recall@10"],
                "p50_ms": results[name]["latency"]["p50_ms"],
                "delta": p.delta,
                "ci": [p.low, p.high],
                "per_conversation_delta": {g: conv[g] - conv_base[g] for g in conv},
                "per_question": per_q[name],
                "per_category": {
                    k: v["recall@10"] for k, v in results[name]["per_category_recall@10"].items()
                },
            }
        )
    loo = {
        d: [
            {
                "held_out": h.held_out,
                "chosen": h.chosen,
                "delta": h.paired.delta,
                "ci": [h.paired.low, h.paired.high],
            }
            for h in leave_one_out(base, {n: per_q[n] for n in ns}, groups, args.bootstrap)
        ]
        for d, ns in names.items()
    }
    return {
        "base": {
            "recall@10": results[BASE]["recall@10"],
            "p50_ms": results[BASE]["latency"]["p50_ms"],
            "per_category": {
                k: v["recall@10"] for k, v in results[BASE]["per_category_recall@10"].items()
            },
        },
        "rows": rows,
        "leave_one_out": loo,
        "without_sessions": sessionless,
        "base_per_question": base,
        "with_sessions_per_question": {r: per_q[r] for r in (BASE, "hybrid")},
    }


def without_sessions(tmp: Path, convs: list[Conversation], model: Any) -> list[dict[str, Any]]:
    """Point 4: turns added one by one without session ids, linked by the engine or not."""
    out = []
    for store, context in (
        ("linked by time (implicit conversations)", "engine"),
        ("not linked (no neighbour context)", "none"),
    ):
        engine, timed = open_engine(tmp / f"nosess-{context}.db", model)
        ingest(engine, timed, convs, batch=1, context=context, with_sessions=False)
        found = evaluate(engine, timed, convs, [BASE, "hybrid"])
        engine.close()
        for recipe, r in found.items():
            out.append(
                {
                    "store": store,
                    "recipe": recipe,
                    "recall@10": r["recall@10"],
                    "per_question": r["per_question_recall@10"],
                    "per_category": {
                        k: v["recall@10"] for k, v in r["per_category_recall@10"].items()
                    },
                }
            )
    return out


def report(out: dict[str, Any], n: int) -> str:
    base = out["base"]["recall@10"]
    rows = [
        [
            r["variant"][2:],
            r["recall@10"],
            f"{r['delta']:+.3f} [{r['ci'][0]:+.3f}, {r['ci'][1]:+.3f}]",
            *(f"{v:+.3f}" for v in r["per_conversation_delta"].values()),
            f"{r['p50_ms'] / out['base']['p50_ms']:.2f}x",
        ]
        for r in out["rows"]
    ]
    convs = list(out["rows"][0]["per_conversation_delta"]) if out["rows"] else []
    parts = [
        f"hybrid without adjustments recall@10 {base:.3f}, search p50 "
        f"{out['base']['p50_ms']:.1f} ms (query vectors cached: the query embedding is not in it)",
        table(
            [
                "variant",
                "R@10",
                "Δ vs hybrid_plain [95% CI]",
                *(f"Δ conv {c}" for c in convs),
                "p50 vs hybrid_plain",
            ],
            rows,
        ),
    ]
    loo_rows = [
        [
            d,
            h["held_out"],
            h["chosen"][2:],
            f"{h['delta']:+.3f} [{h['ci'][0]:+.3f}, {h['ci'][1]:+.3f}]",
        ]
        for d, hs in out["leave_one_out"].items()
        for h in hs
    ]
    parts += [
        "",
        "leave one conversation out (value chosen on the other conversation)",
        table(["direction", "held out", "chosen", "Δ on held out [95% CI]"], loo_rows),
    ]
    cats = list(out["base"]["per_category"])
    cat_rows = [["hybrid_plain", *out["base"]["per_category"].values()]]
    cat_rows += [[r["variant"][2:], *(r["per_category"][c] for c in cats)] for r in out["rows"]]
    parts += ["", "recall@10 per category", table(["variant", *cats], cat_rows)]
    ws = out["without_sessions"]
    with_sessions = out["with_sessions_per_question"]
    ws_rows = [
        [
            w["store"],
            w["recipe"],
            w["recall@10"],
            str(bootstrap(with_sessions[w["recipe"]], w["per_question"], n)),
            *w["per_category"].values(),
        ]
        for w in ws
    ]
    parts += [
        "",
        "without session ids (Δ vs the same recipe with session ids)",
        table(["store", "recipe", "R@10", "Δ [95% CI]", *cats], ws_rows),
    ]
    return "\n".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--embed-cache", type=Path, default=RESULTS_DIR / "locomo_vectors.npz")
    parser.add_argument("--bootstrap", type=int, default=5000)
    parser.add_argument("--directions", default="", help="comma-separated (default: all)")
    parser.add_argument("--variant", action="append", default=[], help="k=v,k=v recipe options")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "recall_directions.json")
    args = parser.parse_args()
    out = run(args)
    print(report(out, args.bootstrap))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    sys.exit(main())
