"""Query-aware adjustments of a fused ranking (issue 13, point 3), each a recipe option.

* Speakers: a turn stored as ``<Name>: <text>`` (how a transcript names who speaks) is the
  speaker's; a query that names one of the candidates' speakers, and not the others, boosts
  that speaker's turns (``What did Caroline research?``: Caroline's own turns first).
* Dates: a query naming a month, a day or a year (``in June``, ``in May 2023``,
  ``on October 13, 2023``) boosts turns said in that period or within ``slack`` days after it
  (people tell of an event after it happened). A turn's time is its ``created_at``.
* Pseudo-relevance feedback: the words the top hits share (and the query lacks) form a second
  keyword query, fused as one more signal.

All work on the candidates the signals already returned: nothing here finds a memory the
signals did not.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from omoide.retrieval.terms import keyword_terms

_SPEAKER = re.compile(r"^\s*([A-Z][\w'.-]{1,30}(?: [A-Z][\w'.-]{1,30}){0,2}):\s")
_NAME_WORD = re.compile(r"[A-Za-z][a-z]+")
_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
_MONTH = r"(january|february|march|april|may|june|july|august|september|october|november|december)"
_DAY_MONTH_YEAR = re.compile(
    rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+{_MONTH},?\s+((?:19|20)\d\d)\b", re.I
)
_MONTH_DAY_YEAR = re.compile(
    rf"\b{_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+((?:19|20)\d\d)\b", re.I
)
_MONTH_YEAR = re.compile(rf"\b{_MONTH},?\s+((?:19|20)\d\d)\b", re.I)
# a bare month only after "in"/"during"/"of": "may" alone is mostly the verb
_MONTH_ALONE = re.compile(rf"\b(?:in|during|of|since)\s+{_MONTH}\b", re.I)
_YEAR = re.compile(r"\b(?:in|during|of|since)\s+((?:19|20)\d\d)\b", re.I)


def speaker(text: str) -> str | None:
    """The speaker a transcript line names (``Caroline: hi`` -> ``caroline``), lower-cased."""
    found = _SPEAKER.match(text)
    return found.group(1).lower() if found else None


def named_speakers(query: str, speakers: Iterable[str]) -> set[str]:
    """The speakers (from ``speakers``) the query names, by their first name or full name."""
    words = {w.lower() for w in _NAME_WORD.findall(query)}
    return {s for s in speakers if s.split()[0] in words or s in words}


@dataclass(frozen=True)
class Period:
    """A period a query names: ``year`` with an optional month and day, or a month of any
    year (``year`` None)."""

    year: int | None
    month: int | None = None
    day: int | None = None

    def contains(self, at: datetime, slack_days: int) -> bool:
        """Whether ``at`` is in the period or up to ``slack_days`` after its end."""
        return any(s <= at < e for s, e in self.windows({at.year - 1, at.year}, slack_days))

    def windows(self, years: set[int], slack_days: int) -> list[tuple[datetime, datetime]]:
        """``[start, end + slack)`` of the period (in each of ``years`` for a month of any
        year)."""
        chosen = sorted(years) if self.year is None else [self.year]
        slack = timedelta(days=slack_days)
        return [(self._start(y), self._end(y) + slack) for y in chosen]

    def _start(self, year: int) -> datetime:
        return datetime(year, self.month or 1, self.day or 1, tzinfo=UTC)

    def _end(self, year: int) -> datetime:
        start = self._start(year)
        if self.day is not None:
            return start + timedelta(days=1)
        if self.month is None:
            return start.replace(year=year + 1)
        return (
            start.replace(year=year + 1, month=1)
            if self.month == 12
            else start.replace(month=self.month + 1)
        )


# A question names a period or two; every candidate is compared with each one a query names,
# so a query that repeated dates by the thousand held the interpreter lock for seconds.
MAX_PERIODS = 16


def periods(query: str) -> list[Period]:
    """The days, months and years a query names, each once, the first ``MAX_PERIODS`` of them;
    each part of the text is read once."""
    found: dict[Period, None] = {}
    text = query
    for pattern in (_DAY_MONTH_YEAR, _MONTH_DAY_YEAR, _MONTH_YEAR, _MONTH_ALONE, _YEAR):
        found.update((_period(pattern, m), None) for m in pattern.finditer(text))
        text = pattern.sub(" ", text)
    return list(found)[:MAX_PERIODS]


def _period(pattern: re.Pattern[str], m: re.Match[str]) -> Period:
    if pattern is _DAY_MONTH_YEAR:
        return Period(int(m[3]), _MONTHS[m[2].lower()], int(m[1]))
    if pattern is _MONTH_DAY_YEAR:
        return Period(int(m[3]), _MONTHS[m[1].lower()], int(m[2]))
    if pattern is _MONTH_YEAR:
        return Period(int(m[2]), _MONTHS[m[1].lower()])
    if pattern is _MONTH_ALONE:
        return Period(None, _MONTHS[m[1].lower()])
    return Period(int(m[1]))


def feedback_terms(query: str, texts: Sequence[str], count: int) -> list[str]:
    """Up to ``count`` words that most of the top hits' ``texts`` contain and the query does
    not (each word counted once per text; ties in order of first appearance). Speaker names
    are left out: every turn of a speaker has one."""
    asked = set(keyword_terms(query))
    names = {part for t in texts if (s := speaker(t)) for part in s.split()}
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(dict.fromkeys(keyword_terms(text), 1))
    ranked = [
        w
        for w, n in counts.most_common()
        if n >= 2 and w not in asked and w not in names and len(w) > 2
    ]
    return ranked[:count]


def boost_factors(
    query: str,
    texts: dict[str, str],
    times: dict[str, datetime],
    speaker_boost: float,
    date_boost: float,
    slack_days: int,
) -> dict[str, float]:
    """A factor >= 1 per candidate id: ``1 + speaker_boost`` for the turns of the one speaker
    the query names, ``1 + date_boost`` for turns said in a period it names (both multiply)."""
    factors = dict.fromkeys(texts, 1.0)
    by_speaker = speaker_matches(query, texts) if speaker_boost else set()
    in_period = date_matches(query, times, slack_days) if date_boost else set()
    for i in factors:
        if i in by_speaker:
            factors[i] *= 1.0 + speaker_boost
        if i in in_period:
            factors[i] *= 1.0 + date_boost
    return factors


def speaker_matches(query: str, texts: dict[str, str]) -> set[str]:
    """The ids of the turns of the one speaker the query names (none if it names several)."""
    said_by = {i: speaker(t) for i, t in texts.items()}
    named = named_speakers(query, {s for s in said_by.values() if s})
    if len(named) != 1:
        return set()
    return {i for i, who in said_by.items() if who in named}


def named_turns(query: str, texts: dict[str, str]) -> set[str]:
    """The ids of the turns whose speaker the query names (each turn on its own, unlike
    ``speaker_matches``: whatever the other candidates' speakers are)."""
    words = {w.lower() for w in _NAME_WORD.findall(query)}
    return {
        i
        for i, t in texts.items()
        if (who := speaker(t)) is not None and (who.split()[0] in words or who in words)
    }


def date_matches(query: str, times: dict[str, datetime], slack_days: int) -> set[str]:
    """The ids of the turns said in a period the query names (or ``slack_days`` after it)."""
    asked = periods(query)
    return {i for i, at in times.items() if any(p.contains(at, slack_days) for p in asked)}
