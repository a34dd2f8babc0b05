"""Where the query expansion's neighbour words come from, and what that costs in recall.

    python bench/expansion_sources.py [--data DIR] [--embed-cache FILE] [--out FILE]

The ``hybrid`` recipe's expansion (omoide/retrieval/expansion.py) takes each query word's
nearest words among the words of the top 30 hits of the vector + keyword fusion, so its
keyword query waits for both signals: at 100k memories it is ~8 ms of a ~25 ms search that
nothing overlaps (bench/README.md). Two sources that would let it start earlier, each measured
here against the product's expansion on the same store, question for question:

* ``vocabulary``: the query words' nearest words in the whole common-word table (no hits
  needed: the expansion's keyword query could run beside the first one);
* ``keyword hits``: the words of the top N hits of the keyword signal alone (the expansion
  could run while the query is embedded and searched by vector).

The search service's ``_expand`` is replaced here, bench-only; the store is built as
bench/locomo.py builds it. Results: bench/results/expansion_sources.json (or ``--out``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from common import DEFAULT_DATA, RESULTS_DIR, load_locomo, table
from embed_cache import DiskCachedEmbedder
from locomo import evaluate, ingest, open_engine, warm_up
from paired import bootstrap, per_group

from omoide.config import Settings
from omoide.embed import build_embedder
from omoide.engine import search as search_module
from omoide.engine.search.vocabulary import common_words
from omoide.retrieval.expansion import expandable, expansion_terms
from omoide.retrieval.fusion import fused_ids
from omoide.retrieval.terms import keyword_terms
from omoide.store.sqlite.keyword import Tokenizer

Expand = Callable[..., None]
PRODUCT: Expand = search_module.SearchService._expand


def vocabulary_source(per_word: int, similarity: float, new_stems: bool = False) -> Expand:
    """Each query word's ``per_word`` nearest table words with a cosine >= ``similarity``;
    ``new_stems``: only words of another stem than every query word's (``books`` adds nothing
    to ``book``), and no neighbours for capitalised query words (names)."""
    table: dict[str, Any] = {}
    stems = Tokenizer()

    # the search service's ``_expand`` signature, of which this source needs no recipe or texts
    def expand(self: Any, _recipe: Any, query: str, scope: Any, terms: list[str],
               filters: Any, fetch: int, signals: dict[str, Any], _said: Any) -> None:  # fmt: skip
        owner = (scope.user_id, scope.scope_id)
        if not table:
            words = list(common_words())
            found = self._words(words, owner=owner)
            table["words"] = [w for w in words if w in found]
            table["matrix"] = np.stack([found[w] for w in table["words"]])
        asked = keyword_terms(query)
        names = {w.lower() for w in query.split() if w[:1].isupper()} if new_stems else set()
        own = set(stems.query_terms(asked)) if new_stems else set()
        seeds = self._words([w for w in asked if expandable(w) and w not in names], owner=owner)
        extra: dict[str, None] = {}
        for vector in seeds.values():
            sims = table["matrix"] @ vector
            taken = 0
            for j in np.argsort(-sims, kind="stable")[:50]:
                word = table["words"][j]
                if sims[j] < similarity or taken >= per_word:
                    break
                if new_stems and set(stems.query_terms([word])) & own:
                    continue
                if word not in asked and word not in extra:
                    extra[word] = None
                    taken += 1
        if extra:
            signals["expansion"] = self._store.memories.keyword_search(
                scope, terms + list(extra), filters, fetch
            )

    return expand


def keyword_hits_source(docs: int) -> Expand:
    """The product's neighbour rule over the top ``docs`` hits of the keyword signal alone."""

    def expand(self: Any, recipe: Any, query: str, scope: Any, terms: list[str],
               filters: Any, fetch: int, signals: dict[str, Any], said: Any) -> None:  # fmt: skip
        ids = fused_ids(recipe, {"keyword": signals["keyword"]}, docs)
        said.update(self._store.memories.texts_and_times(scope, ids))
        top = [said[i][0] for i in ids if i in said]
        owner = (scope.user_id, scope.scope_id)
        extra = expansion_terms(
            query, top, partial(self._words, owner=owner),
            recipe.expansion_terms, recipe.expansion_similarity,
        )  # fmt: skip
        if extra:
            signals["expansion"] = self._store.memories.keyword_search(
                scope, terms + extra, filters, fetch
            )

    return expand


VARIANTS: dict[str, Expand] = {
    "product (top 30 fused hits)": PRODUCT,
    "vocabulary, 3 per word, cos >= 0.5": vocabulary_source(3, 0.5),
    "vocabulary, 5 per word, cos >= 0.5": vocabulary_source(5, 0.5),
    "vocabulary, 3 per word, cos >= 0.6": vocabulary_source(3, 0.6),
    "vocabulary, other stems, no names, 3 per word, cos >= 0.5": vocabulary_source(3, 0.5, True),
    "vocabulary, other stems, no names, 3 per word, cos >= 0.6": vocabulary_source(3, 0.6, True),
    "keyword hits, top 20": keyword_hits_source(20),
    "keyword hits, top 30": keyword_hits_source(30),
    "keyword hits, top 50": keyword_hits_source(50),
}


def run(args: argparse.Namespace) -> dict[str, Any]:
    convs = load_locomo(args.data)
    groups = [(c.sample_id, len(c.questions)) for c in convs]
    model = DiskCachedEmbedder(build_embedder(Settings()), args.embed_cache)
    found: dict[str, dict[str, Any]] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            engine, timed = open_engine(Path(tmp) / "locomo.db", model)
            warm_up(timed)
            ingest(engine, timed, convs)
            for name, expand in VARIANTS.items():
                search_module.SearchService._expand = expand  # type: ignore[method-assign]
                found[name] = evaluate(engine, timed, convs, ["hybrid"])["hybrid"]
            engine.close()
    finally:
        search_module.SearchService._expand = PRODUCT  # type: ignore[method-assign]
    model.save()
    base = found[next(iter(VARIANTS))]["per_question_recall@10"]
    rows = []
    for name, result in found.items():
        per_q = result["per_question_recall@10"]
        paired = bootstrap(base, per_q, args.bootstrap)
        conv, conv_base = per_group(per_q, groups), per_group(base, groups)
        rows.append(
            {
                "variant": name,
                "recall@10": result["recall@10"],
                "delta": paired.delta,
                "ci": [paired.low, paired.high],
                "per_conversation_delta": {g: conv[g] - conv_base[g] for g in conv},
                "per_category": {
                    k: v["recall@10"] for k, v in result["per_category_recall@10"].items()
                },
                "per_question": per_q,
            }
        )
    return {"rows": rows}


def report(out: dict[str, Any]) -> str:
    rows = out["rows"]
    convs = list(rows[0]["per_conversation_delta"])
    cats = list(rows[0]["per_category"])
    return table(
        ["neighbour words from", "R@10", "Δ vs product [95% CI]",
         *(f"Δ conv {c}" for c in convs), *cats],
        [
            [
                r["variant"], r["recall@10"],
                f"{r['delta']:+.3f} [{r['ci'][0]:+.3f}, {r['ci'][1]:+.3f}]",
                *(f"{v:+.3f}" for v in r["per_conversation_delta"].values()),
                *(f"{r['per_category'][c]:.3f}" for c in cats),
            ]
            for r in rows
        ],
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--embed-cache", type=Path, default=RESULTS_DIR / "locomo_vectors.npz")
    parser.add_argument("--bootstrap", type=int, default=5000)
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "expansion_sources.json")
    args = parser.parse_args()
    out = run(args)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1))
    print(report(out))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
