"""Word segmentation for Chinese, Japanese and Korean text in the keyword index and queries.

FTS5's ``unicode61`` tokenizer splits on spaces and punctuation, so an unsegmented CJK sentence
is one token: ``我住在深圳`` stored, ``深圳`` searched, nothing found. These functions rewrite each
run of CJK characters into space-separated tokens, leaving every other character as it was
(so English text, and the LoCoMo figures, are untouched):

- always, with no dependency: the run's overlapping character bigrams (the classic CJK
  analyzer: ``深圳`` is a bigram of ``我住在深圳``), and on the document side its single
  characters too, so that a one-character query such as ``茶`` finds ``我喜欢茉莉花茶``;
- when jieba is installed (``pip install omoide[cjk]``), also jieba's words for the Chinese
  parts (``茉莉花``, ``共和国``): they add exact-word matches on top of the bigrams, which
  rank a real word above a chance pair of characters.

Because the bigrams are always there, a document indexed without jieba is still found by a
query segmented with it, and the other way round: installing jieba later only adds precision.
jieba is imported on first use (0.5 s and ~75 MB to load its dictionary), never at import.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable, Iterable

_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff"
_KANA = "\u3040-\u309f\u30a0-\u30ff\u31f0-\u31ff\uff66-\uff9f"
_HANGUL = "\u1100-\u11ff\u3130-\u318f\uac00-\ud7af"
CJK_RUN = re.compile(f"[{_HAN}{_KANA}{_HANGUL}]+")
_HAN_RUN = re.compile(f"[{_HAN}]+")

# Function characters that would match nearly every Chinese text; dropped from queries only.
CJK_STOPWORDS = frozenset("的了是在我你他她它们和与就都也很吗呢吧啊呀这那有不一个之于")


@functools.cache
def _jieba() -> Callable[[str], Iterable[str]] | None:
    """jieba's search-mode cutter, or None when it is not installed."""
    try:
        import jieba
    except ImportError:
        return None
    jieba.setLogLevel(logging.WARNING)  # it logs its dictionary loading at INFO on stderr
    cut: Callable[[str], Iterable[str]] = jieba.cut_for_search
    return cut


def has_jieba() -> bool:
    return _jieba() is not None


def _bigrams(run: str) -> list[str]:
    return [run] if len(run) < 2 else [run[i : i + 2] for i in range(len(run) - 1)]


# jieba's time grows with the square of a run it cannot split by its dictionary (its HMM copies
# each path it extends): one long run held a worker for minutes. It gets runs of at most this
# many characters; a word across two pieces is still found by its bigrams.
JIEBA_PIECE = 256


def _words(run: str) -> list[str]:
    cut = _jieba()
    if cut is None:
        return []
    pieces = (
        han[i : i + JIEBA_PIECE]
        for han in _HAN_RUN.findall(run)
        for i in range(0, len(han), JIEBA_PIECE)
    )
    return [w for piece in pieces for w in cut(piece) if w.strip()]


def cjk_tokens(run: str, *, query: bool = False) -> list[str]:
    """The tokens of one CJK run, distinct, in order.

    Document side: characters, bigrams and jieba's words of two characters or more. Query side:
    the run itself (which still matches text indexed before segmentation existed), bigrams and
    jieba's words of any length, without ``CJK_STOPWORDS``.

    >>> cjk_tokens("深圳市", query=True)
    ['深圳市', '深圳', '圳市']
    """
    if query:
        tokens = ([run] if len(run) > 2 else []) + _bigrams(run) + _words(run)
        tokens = [t for t in tokens if t not in CJK_STOPWORDS]
    else:
        singles = list(run) if len(run) > 1 else []
        tokens = singles + _bigrams(run) + [w for w in _words(run) if len(w) > 1]
    return list(dict.fromkeys(tokens))


def segment(text: str) -> str:
    """``text`` for the keyword index: each CJK run replaced by its tokens, space-separated.

    >>> segment("我住在Shenzhen")
    ' 我 住 在 我住 住在 Shenzhen'

    Text without CJK characters comes back unchanged.
    """
    return CJK_RUN.sub(lambda m: " " + " ".join(cjk_tokens(m.group(0))) + " ", text)


def segment_query(text: str, max_run: int | None = None) -> str:
    """``text`` as a keyword query: each CJK run replaced by its query tokens, read from its
    first ``max_run`` characters (all by default). A caller that keeps the first ``n`` terms
    passes a few times ``n``: a run's bigrams come first, so the terms it keeps are the same,
    and a long run is not segmented whole for a few dozen terms."""
    return CJK_RUN.sub(
        lambda m: " " + " ".join(cjk_tokens(m.group(0)[:max_run], query=True)) + " ", text
    )
