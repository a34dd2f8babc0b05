"""Turning user text into safe keyword-search terms.

Stopwords are dropped because an OR over frequent words is what makes FTS5 slow at scale
(bench/README.md) and adds nothing to bm25. At most ``MAX_TERMS`` terms are kept, to stay
below SQLite's expression depth limit. The store quotes every term,
so no user text is ever FTS5 syntax. Chinese, Japanese and Korean runs are split into words and
character bigrams first (``omoide.segment``), the way the index must store them.
"""

from __future__ import annotations

import re

from omoide.segment import segment_query

MAX_TERMS = 60
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?", re.UNICODE)

_STOPWORD_TEXT = """
    a about above after again against all am an and any are aren't as at be because been
    before being below between both but by can can't cannot could couldn't did didn't do
    does doesn't doing don't down during each few for from further had hadn't has hasn't
    have haven't having he he'd he'll he's her here here's hers herself him himself his how
    how's i i'd i'll i'm i've if in into is isn't it it's its itself let's me more most
    mustn't my myself no nor not of off on once only or other ought our ours ourselves out
    over own same shan't she she'd she'll she's should shouldn't so some such than that
    that's the their theirs them themselves then there there's these they they'd they'll
    they're they've this those through to too under until up very was wasn't we we'd we'll
    we're we've were weren't what what's when when's where where's which while who who's
    whom why why's with won't would wouldn't you you'd you'll you're you've your yours
    yourself yourselves also just did does will shall may might must s t d ll m o re ve y
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def keyword_terms(text: str, limit: int = MAX_TERMS) -> list[str]:
    """Distinct, lower-cased, non-stopword words of ``text``, in order of appearance; a CJK
    run gives its segmented tokens (``深圳`` from ``我住在深圳``)."""
    seen: dict[str, None] = {}
    for match in _WORD.finditer(segment_query(text, 4 * limit).lower()):
        word = match.group(0).replace("'", "")
        if match.group(0) in STOPWORDS or word in STOPWORDS or word in seen:
            continue
        seen[word] = None
        if len(seen) >= limit:
            break
    return list(seen)


def split_keywords(text: str, limit: int = MAX_TERMS) -> list[str]:
    """A keyword list split on ``;``: phrases kept whole, capped."""
    phrases = [p.strip() for p in text.split(";") if p.strip()]
    return phrases[:limit]
