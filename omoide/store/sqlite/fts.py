"""The FTS5 keyword path used before the per-tenant index (migration 0006, keyword.py).

Searches no longer use it: its statistics are the whole file's, so one tenant's ranking
depended on other tenants. It stays for ``TOKENIZER`` (the per-tenant index tokenises exactly
as the FTS5 table does) and for bench/keyword_speed.py, which times it against keyword.py on
the same rows. What follows describes that old path.

Terms whose document frequency is at least ``COMMON_SHARE`` of all documents are dropped: bm25
gives a term in half the documents an IDF of ~0 (FTS5 clamps it to 1e-6), yet ranking its
postings is what makes OR queries slow (a speaker's name in every turn cost 38 ms at 100k
rows). Frequencies come from an fts5vocab table, looked up by the term's stemmed form (stemmed
by FTS5 itself, in a private in-memory table) and cached until the index grows by 10%.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence

COMMON_SHARE = 0.3
POSTINGS_SHARE = 0.15
MIN_DOCS = 2_000
TOKENIZER = "porter unicode61 remove_diacritics 2"


class TermFilter:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stems: dict[str, str] = {}
        self._df: dict[str, tuple[int, int]] = {}
        self._stemmer = sqlite3.connect(":memory:", check_same_thread=False)
        self._stemmer.execute(f"CREATE VIRTUAL TABLE q USING fts5(x, tokenize='{TOKENIZER}')")
        self._stemmer.execute("CREATE VIRTUAL TABLE qv USING fts5vocab(q, 'instance')")

    def selective(self, conn: sqlite3.Connection, terms: Sequence[str]) -> list[str]:
        """``terms`` without the ones too common to matter (never all of them)."""
        total = conn.execute("SELECT max(seq) FROM memories").fetchone()[0] or 0
        if total < MIN_DOCS or len(terms) < 2:
            return list(terms)
        with self._lock:
            stems = self._stem(terms)
            freqs = [self._frequency(conn, stems.get(t, t), total) for t in terms]
        # Rarest first, until the postings to rank would pass POSTINGS_SHARE of the index: the
        # rare terms carry nearly all of bm25's weight, the frequent ones nearly all of its cost.
        keep: list[str] = []
        postings = 0
        for df, term in sorted(zip(freqs, terms, strict=True)):
            if keep and (df >= COMMON_SHARE * total or postings + df > POSTINGS_SHARE * total):
                break
            keep.append(term)
            postings += df
        return [t for t in terms if t in keep]

    def _stem(self, terms: Sequence[str]) -> dict[str, str]:
        missing = [t for t in terms if t not in self._stems]
        for term in missing:
            self._stemmer.execute("DELETE FROM q")
            self._stemmer.execute("INSERT INTO q(x) VALUES (?)", (term,))
            found = self._stemmer.execute("SELECT term FROM qv ORDER BY offset").fetchall()
            # A word the tokenizer splits in two is looked up by its first part.
            self._stems[term] = found[0][0] if found else term
        if len(self._stems) > 50_000:
            self._stems.clear()
        return {t: self._stems[t] for t in terms}

    def _frequency(self, conn: sqlite3.Connection, stem: str, total: int) -> int:
        cached = self._df.get(stem)
        if cached is not None and total <= cached[1] * 1.1:
            return cached[0]
        row = conn.execute("SELECT doc FROM memories_vocab WHERE term = ?", (stem,)).fetchone()
        df = int(row[0]) if row else 0
        self._df[stem] = (df, total)
        return df


def match_expression(terms: Sequence[str], tenant_token: str) -> str:
    """``("a" OR "b") AND tenant_token:"t123"``. Every term is quoted: never FTS5 syntax."""
    ored = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
    return f'({ored}) AND tenant_token : "{tenant_token}"'
