"""Search strategy as data: a named recipe says which signals run and how they are fused."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from omoide.errors import InvalidInput


class SearchRecipe(BaseModel):
    """How to search. ``fusion='rrf'`` is reciprocal-rank fusion; ``'weighted'`` mixes
    min-max-normalised scores as ``vector_weight * dense + keyword_weight * bm25``."""

    model_config = ConfigDict(frozen=True)

    name: str
    keyword: bool = True
    vector: bool = True
    fusion: Literal["rrf", "weighted"] = "rrf"
    # "relevance": every candidate scored by its own evidence (omoide/retrieval/relevance.py)
    # and ranked by that score; "fusion": ranked by the fusion, scored as fusion.py says.
    scorer: Literal["fusion", "relevance"] = "fusion"
    rrf_k: int = Field(60, ge=1)
    vector_weight: float = Field(0.5, ge=0)
    keyword_weight: float = Field(0.5, ge=0)
    candidates: int = Field(100, ge=1, description="Hits taken from each signal before fusion.")
    # How scores become relevance in [0, 1] (omoide/retrieval/fusion.py): a cosine c gives
    # 1 - exp(-(c - floor) / scale), 0 at or below the floor. Set for all-MiniLM-L6-v2 on the
    # LoCoMo dev set; another embedding model may need other values.
    relevance_floor: float = Field(0.35, ge=-1, le=1)
    relevance_scale: float = Field(0.12, gt=0)
    keyword_saturation: float = Field(5.0, gt=0, description="bm25 scoring 0.5, keywords only.")
    # Query-aware adjustments (omoide/retrieval/rerank.py); 0 turns each off.
    speaker_boost: float = Field(0.0, ge=0, description="Boost of the named speaker's turns.")
    date_boost: float = Field(0.0, ge=0, description="Boost of turns said in a named period.")
    date_slack_days: int = Field(30, ge=0, description="Days after a named period still in it.")
    feedback_terms: int = Field(0, ge=0, description="Words of the top hits added to a query.")
    feedback_docs: int = Field(3, ge=1, description="Top hits the feedback words come from.")
    feedback_weight: float = Field(0.3, ge=0, description="Weight of the feedback query.")
    # Query expansion by word-vector neighbours (omoide/retrieval/expansion.py); 0 turns it off.
    expansion_terms: int = Field(0, ge=0, description="Neighbour words added per query word.")
    expansion_docs: int = Field(30, ge=1, description="Top hits the neighbour words come from.")
    expansion_similarity: float = Field(0.5, ge=-1, le=1, description="Least word cosine.")
    expansion_weight: float = Field(0.15, ge=0, description="Weight of the expanded query.")


RECIPES: dict[str, SearchRecipe] = {
    r.name: r
    for r in (
        # Chosen on the LoCoMo dev set (bench/README.md): BM25 over turns with their neighbours
        # is the stronger signal on conversations, so it leads the fusion.
        # The speaker and date boosts moved both dev conversations the same way, alone and
        # together (docs/decisions/0003, bench/README.md): +0.035 recall@10 [+0.011,
        # +0.062], search 1.08x. Feedback (feedback_terms=5) stays opt-in: on top of them
        # +0.008 [-0.016, +0.031] for a second keyword query (search 1.4-1.9x).
        # Query expansion by word-vector neighbours from the top 30 hits, on top of the boosts
        # (bench/README.md, "Recall directions, round 4"): +0.017 recall@10 [+0.000, +0.037],
        # both dev conversations up; see omoide/retrieval/expansion.py.
        # The default: the vector and keyword candidates, each ranked by its relevance (the
        # probability that it is relevant, omoide/retrieval/relevance.py), fitted on several
        # shapes (bench/relevance.py). The boosts' options say whether the speaker and date
        # evidence count; the expansion stays off: its words come from the other top hits (a
        # hit's score would depend on them) and it added nothing the fit could see.
        SearchRecipe(
            name="hybrid",
            scorer="relevance",
            rrf_k=30,
            vector_weight=0.3,
            keyword_weight=0.7,
            speaker_boost=0.25,
            date_boost=1.0,
        ),
        SearchRecipe(
            name="hybrid_rrf",
            rrf_k=30,
            vector_weight=0.3,
            keyword_weight=0.7,
            speaker_boost=0.25,
            date_boost=1.0,
            expansion_terms=3,
        ),
        SearchRecipe(
            name="hybrid_weighted", fusion="weighted", vector_weight=0.7, keyword_weight=0.3
        ),
        SearchRecipe(name="keyword", vector=False),
        SearchRecipe(name="vector", keyword=False),
    )
}


def get_recipe(name: str) -> SearchRecipe:
    try:
        return RECIPES[name]
    except KeyError:
        raise InvalidInput(
            f"unknown search recipe {name!r}; choose one of {', '.join(sorted(RECIPES))}"
        ) from None
