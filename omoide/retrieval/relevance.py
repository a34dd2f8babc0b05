"""A hit's relevance: the probability that it is relevant to the query, from its own evidence.

Each candidate of a search (the union of the vector and keyword candidate lists) is scored
from what the search already knows about it and nothing else: its cosine to the query, its
bm25 for the query's words (with the tenant's own statistics), the share of the query's content
words its own text holds, whether it was said by a speaker the query names or in a period the
query names, whether an assistant said it, whether it is a turn of a session or a standalone
memory (two models: the same cosine means more for a standalone fact than for one turn among
many on its topic; a fact derived from a session, or a message written without one, is
standalone), and how many memories its tenant holds (``prior``: in a small tenant each
candidate is likelier to be the answer). No value depends on the other hits of the result (no
min-max or rank normalisation, no softmax over the result list, no words borrowed from the top
hits) or on another tenant (bm25 and the size are the tenant's own statistics), so a hit
scores the same whatever else the result holds, and a threshold means the same for every query
and every size of tenant: 0.3 keeps hits that are relevant about 3 times in 10. A keyword
candidate outside the vector list's nearest 100 is scored by its own cosine too, read with its
text; only a memory without a vector yet (its embedding pending) has none, and is scored as one
just below such a list's.

The model is logistic over a few monotone features: weights fitted by a pairwise ranking
loss, then scaled to probabilities (Platt), by ``python bench/relevance.py --fit`` on three
shapes of memory at once (LoCoMo conversations, LongMemEval chat histories, standalone facts
in several styles), each shape weighted alike and each held out in turn; the coefficients
below are what that command printed on its first round, the prior's and the assistant's
weights what it prints now (bench/README.md, "Relevance" and its later rounds, has the figures
and why a refit was not kept).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import snowballstemmer

from omoide.retrieval.terms import keyword_terms

# Names of the features, in the order of ``WEIGHTS``.
FEATURES = (
    "cosine",
    "cosine_missing",
    "keyword",
    "coverage",
    "speaker",
    "date",
    "assistant",
)
# A candidate outside the vector list scores below every cosine the list holds; with 100
# candidates in a tenant of chat turns that bound sits near this value.
MISSING_COSINE = 0.15


@dataclass(frozen=True)
class Model:
    """Weights of ``FEATURES`` and a bias: ``P = 1 / (1 + exp(-(bias + weights . x + prior)))``.

    ``population``: the size of the tenants the model was fitted on. A question has about
    as many relevant memories in a small tenant as in a large one, among fewer candidates:
    in a tenant of ``n`` memories, ``n < population``, the odds of each candidate rise by
    about ``population / n`` (``prior``; a tenant of two memories, one of them the answer, is
    not a tenant of hundreds with one). Larger tenants keep the fitted odds: they tend to
    hold more than one relevant memory, so their prior is not known to fall."""

    weights: tuple[float, ...]
    bias: float
    population: float = 1.0


# A turn an assistant said, in a chat between a user and an assistant: what there is to
# remember of the user is what the user said; the assistant's replies are long and share many
# of the question's words without being what it asks for. Fitted alone, the turn model's other
# weights held (``python bench/relevance.py --fit`` prints it as ``assistant_weight``): only
# chat histories have assistant turns (LongMemEval), and a refit of every weight on them moved
# LoCoMo's ranking (bench/README.md). Standalone memories keep 0: no shape measured them.
ASSISTANT_WEIGHT = -3.035

# Fitted by ``python bench/relevance.py --fit`` (see the module docstring): one model for
# the turns of conversations, one for standalone memories. A turn's words and cosine say less
# than a standalone fact's: its neighbours share its topic, and the question's answer is often
# one turn of several on it. ``population``: the smallest tenant of each model's fit, which
# that command prints too. (A refit on the whole LongMemEval dev set moved the turn weights
# towards it: better there, worse on LoCoMo, so the weights stayed; bench/README.md.)
TURN = Model(
    weights=(2.463, -0.036, 2.064, 0.789, 1.604, 1.102, ASSISTANT_WEIGHT),
    bias=-8.422,
    population=369,
)
STANDALONE = Model(
    weights=(12.317, 0.0, 1.321, 0.969, 1.604, 1.102, 0.0), bias=-7.162, population=42
)


@dataclass(frozen=True)
class Evidence:
    """What a search knows of one candidate. ``cosine`` is None when the candidate has no
    vector (its embedding pending); ``keyword`` its bm25 (0 when not among the keyword hits);
    ``coverage`` the share of the query's content words in the memory's own text; ``turn``
    whether the memory is a turn of a conversation (else a standalone memory); ``assistant``
    whether an assistant said it (its role); ``population`` how many memories its tenant
    holds (0: unknown, no prior)."""

    cosine: float | None
    keyword: float = 0.0
    coverage: float = 0.0
    speaker: bool = False
    date: bool = False
    turn: bool = False
    population: int = 0
    assistant: bool = False


def features(evidence: Evidence) -> tuple[float, ...]:
    """The model's inputs, each non-decreasing in the evidence (but ``cosine_missing`` and
    ``assistant``, which say what kind of evidence it is)."""
    missing = evidence.cosine is None
    return (
        MISSING_COSINE if evidence.cosine is None else evidence.cosine,
        1.0 if missing else 0.0,
        math.log1p(max(0.0, evidence.keyword)),
        evidence.coverage,
        1.0 if evidence.speaker else 0.0,
        1.0 if evidence.date else 0.0,
        1.0 if evidence.assistant else 0.0,
    )


def model(evidence: Evidence) -> Model:
    """The model for the candidate's kind."""
    return TURN if evidence.turn else STANDALONE


def relevance(evidence: Evidence, chosen: Model | None = None) -> float:
    """P(relevant) of one candidate, in [0, 1), by ``chosen`` or its kind's model."""
    m = chosen or model(evidence)
    z = m.bias + sum(w * x for w, x in zip(m.weights, features(evidence), strict=True))
    z += prior(m, evidence.population)
    return 1.0 / (1.0 + math.exp(-z)) if z > -30 else 0.0


# How much of the smaller tenant's odds ratio the score takes: fitted by
# ``python bench/relevance.py --fit`` on small tenants of two shapes (LoCoMo's sessions alone,
# the fact tenants cut in blocks of eight), each of which chose the same value on its own.
# Below 1: a small tenant also holds fewer of the relevant memories.
PRIOR_WEIGHT = 0.7


def prior(chosen: Model, population: int, weight: float = PRIOR_WEIGHT) -> float:
    """The log-odds a tenant of ``population`` memories adds (``Model``): 0 from the fitted
    size up, and for an unknown size."""
    if population <= 0 or population >= chosen.population:
        return 0.0
    return weight * math.log(chosen.population / population)


# Snowball's English stemmer keeps state while it works: one call at a time.
_STEMMER = snowballstemmer.stemmer("english")
_STEMMER_LOCK = threading.Lock()


@lru_cache(maxsize=50_000)
def _stem(word: str) -> str:
    """A word's English stem (``likes`` / ``liked`` / ``like`` -> ``like``), so that a query
    word matches its other forms in a memory's text."""
    with _STEMMER_LOCK:
        return str(_STEMMER.stemWord(word))


@lru_cache(maxsize=20_000)
def _stems(text: str) -> frozenset[str]:
    return frozenset(_stem(w) for w in keyword_terms(text, 10_000))


def coverage(query_terms: Sequence[str], text: str) -> float:
    """The share of ``query_terms`` (``keyword_terms`` of the query) that ``text`` holds."""
    if not query_terms:
        return 0.0
    held = _stems(text)
    return sum(1 for t in query_terms if _stem(t) in held) / len(query_terms)
