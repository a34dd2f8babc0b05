"""The per-tenant keyword index: postings, document frequencies and lengths of each tenant.

Why not FTS5's ``bm25()``: FTS5 computes IDF and the average length over the whole file, so
one tenant's ranking changed with (and revealed) the words other tenants stored. Here every
statistic is the tenant's own, kept exact (here and by the triggers of migration 0006) in the
same transaction as the memory, so any process sees them as soon as the memory commits.

Tokens are exactly FTS5's (``porter unicode61 remove_diacritics 2``): each document is run
through FTS5 in a private in-memory table and read back from an ``fts5vocab`` instance table.
Scoring is FTS5's bm25 formula (k1 = 1.2, b = 0.75, IDF floor 1e-6, the context column at 0.4)
with the tenant's N, average length and document frequencies; in a store holding one tenant
it equals FTS5's ``bm25(memories_fts, 1.0, 0.4, 0.0)`` (tests/retrieval check this).
"""

from __future__ import annotations

import json
import math
import sqlite3
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from omoide.segment import segment
from omoide.store import pruning
from omoide.store.sql.postings import best, summed
from omoide.store.sqlite.postings import PostingsCache

K1 = 1.2
B = 0.75
CONTEXT_WEIGHT = 0.4
IDF_FLOOR = 1e-6
# The tokenizer of the ``memories_fts`` table (migration 0001): the per-tenant index splits and
# stems text exactly as FTS5 does, so its scores equal FTS5's bm25 on the same rows.
TOKENIZER = "porter unicode61 remove_diacritics 2"
LINE_CACHE = 20_000  # tokenised lines kept (a batch may exceed it: then it alone is kept)


@dataclass(frozen=True)
class Indexed:
    """One tokenised memory: ``tf`` per term (text + 0.4 * context) and its length."""

    tf: dict[str, float]
    length: int


class Tokenizer:
    """FTS5's tokenizer on a private in-memory connection, shared by a store's threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(":memory:", check_same_thread=False)
        self._conn.text_factory = _term
        self._conn.execute(
            f"CREATE VIRTUAL TABLE q USING fts5(text, context, tokenize='{TOKENIZER}')"
        )
        self._conn.execute("CREATE VIRTUAL TABLE qv USING fts5vocab(q, 'instance')")
        self._words: dict[str, list[str]] = {}
        self._lines: dict[str, tuple[dict[str, int], int]] = {}

    def documents(self, docs: Sequence[tuple[str, str]]) -> list[Indexed]:
        """Term frequencies and lengths of ``(text, context)`` documents, in order.

        Tokens never span a line break, so each distinct line is tokenised once and cached: a
        turn's text comes back as its neighbours' context, line for line.
        """
        with self._lock:
            self._tokenise_lines(
                {line for doc in docs for part in doc for line in part.split("\n")}
            )
            out = []
            for text, context in docs:
                tf: dict[str, float] = {}
                length = 1  # the tenant token FTS5 counted in every row's length
                for part, weight in ((text, 1.0), (context, CONTEXT_WEIGHT)):
                    for line in part.split("\n"):
                        counts, tokens = self._lines[line]
                        length += tokens
                        for term, count in counts.items():
                            tf[term] = tf.get(term, 0.0) + weight * count
                out.append(Indexed(tf, length))
            return out

    def _tokenise_lines(self, lines: set[str]) -> None:
        missing = [line for line in lines if line not in self._lines]
        if not missing:
            return
        if len(self._lines) + len(missing) > LINE_CACHE:
            self._lines.clear()  # and tokenise every line of this batch again
            missing = list(lines)
        # CJK runs become space-separated words and bigrams first (omoide.segment), as queries
        # do: FTS5's unicode61 would keep an unsegmented Chinese sentence as one token.
        counts: list[dict[str, int]] = [{} for _ in missing]
        try:
            self._conn.executemany(
                "INSERT INTO q(rowid, text, context) VALUES (?, ?, '')",
                [(i, segment(line)) for i, line in enumerate(missing)],
            )
            found = self._conn.execute("SELECT doc, term, count(*) FROM qv GROUP BY doc, term")
            for doc, term, count in found:
                counts[doc][term] = int(count)
        finally:  # rows left behind would make every later call's insert fail
            self._conn.execute("DELETE FROM q")
        for line, terms in zip(missing, counts, strict=True):
            self._lines[line] = (terms, sum(terms.values()))

    def query_terms(self, words: Sequence[str]) -> list[str]:
        """The distinct index terms of query words, in order (a word may yield several)."""
        out: dict[str, None] = {}
        with self._lock:
            for word in words:
                terms = self._words.get(word)
                if terms is None:
                    terms = [t for t, _ in self._tokens(word)]
                    if len(self._words) > 50_000:
                        self._words.clear()
                    self._words[word] = terms
                out.update((t, None) for t in terms)
        return list(out)

    def _tokens(self, word: str) -> list[tuple[str, int]]:
        try:
            self._conn.execute("INSERT INTO q(rowid, text, context) VALUES (0, ?, '')", (word,))
            found = self._conn.execute("SELECT term, offset FROM qv ORDER BY offset").fetchall()
        finally:
            self._conn.execute("DELETE FROM q")
        return [(str(t), int(o)) for t, o in found]


def _term(value: bytes) -> str:
    """A term as FTS5 returns it. FTS5 cuts a token at 32,768 bytes, which can fall inside a
    character (a run of Thai, or a CJK run in a query, has no space to split at): the cut
    character decodes as U+FFFD, the same in documents and queries."""
    return value.decode("utf-8", "replace")


def index_memories(
    conn: sqlite3.Connection,
    tokenizer: Tokenizer,
    docs: Sequence[tuple[int, str, str, str]],
    *,
    replace: bool = False,
) -> None:
    """Index ``(seq, tenant token, text, context)`` rows, in the caller's transaction.

    ``replace`` removes a memory's previous postings first (its text or context changed).
    """
    if not docs:
        return
    if replace:  # the trigger on kw_docs removes the postings and lowers the frequencies
        conn.executemany("DELETE FROM kw_docs WHERE memory_seq = ?", [(d[0],) for d in docs])
    indexed = tokenizer.documents([(text, context) for _, _, text, context in docs])
    conn.executemany(
        "INSERT INTO kw_docs (memory_seq, tenant, dl, terms) VALUES (?, ?, ?, ?)",
        [
            (seq, tenant, ix.length, json.dumps(list(ix.tf)))
            for (seq, tenant, _, _), ix in zip(docs, indexed, strict=True)
        ],
    )
    postings = [
        (tenant, term, seq, tf, ix.length)
        for (seq, tenant, _, _), ix in zip(docs, indexed, strict=True)
        for term, tf in ix.tf.items()
    ]
    conn.executemany(
        "INSERT INTO kw_postings (tenant, term, memory_seq, tf, dl) VALUES (?, ?, ?, ?, ?)",
        postings,
    )
    # Document frequencies grow here, once per distinct term of the batch (a trigger per
    # posting cost a third of the indexing time); they shrink by the kw_docs trigger.
    added = Counter((tenant, term) for tenant, term, _, _, _ in postings)
    conn.executemany(
        "INSERT INTO kw_terms (tenant, term, df) VALUES (?, ?, ?)"
        " ON CONFLICT (tenant, term) DO UPDATE SET df = df + excluded.df",
        [(tenant, term, n) for (tenant, term), n in added.items()],
    )


def index_pending(conn: sqlite3.Connection, tokenizer: Tokenizer, batch: int = 2_000) -> int:
    """Index memories written before migration 0006 (once, when the store opens)."""
    flagged = conn.execute("SELECT 1 FROM meta WHERE key = 'keyword_index_pending'").fetchone()
    if flagged is None:
        return 0
    done = 0
    last = 0
    while True:
        chunk = conn.execute(
            "SELECT m.seq, m.tenant_token, m.text, m.context FROM memories m"
            " WHERE m.seq > ? AND NOT EXISTS (SELECT 1 FROM kw_docs d WHERE d.memory_seq = m.seq)"
            " ORDER BY m.seq LIMIT ?",
            (last, batch),
        ).fetchall()
        if not chunk:
            break
        index_memories(conn, tokenizer, [(r[0], r[1], r[2], r[3]) for r in chunk])
        last = int(chunk[-1][0])
        done += len(chunk)
    conn.execute("DELETE FROM meta WHERE key = 'keyword_index_pending'")
    return done


def idf(docs: int, df: int) -> float:
    """FTS5's bm25 IDF, floored at 1e-6 (a term in over half the documents)."""
    value = math.log((docs - df + 0.5) / (df + 0.5))
    return value if value > 0 else IDF_FLOOR


@dataclass(frozen=True)
class Plan:
    """What a query ranks in one tenant: the tenant's statistics, and the query's terms kept
    for ranking and left out for rescoring (``omoide.store.pruning``)."""

    docs: int
    avgdl: float
    dfs: dict[str, int]
    kept: list[str]
    left_out: list[str]


def plan(
    conn: sqlite3.Connection, tokenizer: Tokenizer, tenant: str, words: Sequence[str]
) -> Plan | None:
    """The plan of ``words`` in ``tenant``, or None when nothing can match."""
    terms = tokenizer.query_terms(words)
    if not terms:
        return None
    row = conn.execute("SELECT docs, tokens FROM kw_tenants WHERE tenant = ?", (tenant,)).fetchone()
    if row is None or not row[0]:
        return None
    docs = int(row[0])
    marks = ",".join("?" * len(terms))
    dfs = {
        str(t): int(df)
        for t, df in conn.execute(
            f"SELECT term, df FROM kw_terms WHERE tenant = ? AND term IN ({marks})",
            (tenant, *terms),
        )
    }
    kept = pruning.prune(terms, dfs, docs)
    if not kept:
        return None
    return Plan(docs, int(row[1]) / docs, dfs, kept, pruning.dropped(terms, dfs, kept))


def rank(
    conn: sqlite3.Connection,
    tokenizer: Tokenizer,
    postings: PostingsCache,
    tenant: str,
    words: Sequence[str],
    limit: int,
) -> list[tuple[int, float]]:
    """The tenant's best ``limit`` memories matching a kept term, as ``(seq, bm25)``, best
    first (ties by insertion order), the best ``RESCORE_DEPTH`` of them scored with the pruned
    terms too (``omoide.store.pruning``). Run inside one read snapshot."""
    query = plan(conn, tokenizer, tenant, words) if limit > 0 else None
    if query is None:
        return []
    kept, left_out, dfs = query.kept, query.left_out, query.dfs
    depth = pruning.RESCORE_DEPTH if left_out else 0
    bm25 = _Bm25(query.docs, query.avgdl, dfs)
    lists = postings.lists(conn, tenant, kept, dfs)
    if lists is not None:
        seqs, scores = summed([(lists[t].seqs, bm25(t, lists[t].tf, lists[t].dl)) for t in kept])
        order = best(seqs, scores, max(limit, depth))
        seqs, scores = seqs[order], scores[order]
    else:
        seqs, scores = _ranked_in_sql(conn, tenant, kept, bm25, max(limit, depth))
    ranked = list(zip(seqs.tolist(), scores.tolist(), strict=True))
    if not depth or not ranked:
        return ranked[:limit]
    # The pruned terms' score of the best ``depth``: each term's postings searched for them.
    head = seqs[:depth]
    extra = np.zeros(len(head))
    matched = np.zeros(len(head), dtype=bool)
    rows = postings.rows(conn, tenant, left_out, dfs, head)
    for term in left_out:
        found = rows[term]
        if not len(found.seqs):
            continue
        at = np.minimum(np.searchsorted(found.seqs, head), len(found.seqs) - 1)
        hit = found.seqs[at] == head
        at = at[hit]
        extra[hit] += bm25(term, found.tf[at], found.dl[at])
        matched |= hit
    more = dict(zip(head[matched].tolist(), extra[matched].tolist(), strict=True))
    return pruning.rescore(ranked, more, depth)[:limit]


class _Bm25:
    """FTS5's bm25 of each posting of a term, with the tenant's statistics."""

    def __init__(self, docs: int, avgdl: float, dfs: dict[str, int]) -> None:
        self._docs = docs
        self._dfs = dfs
        self.constants = (K1 + 1.0, K1 * (1.0 - B), K1 * B / avgdl)

    def idf(self, term: str) -> float:
        return idf(self._docs, self._dfs[term])

    def __call__(self, term: str, tf: np.ndarray, dl: np.ndarray) -> np.ndarray:
        k1_plus_1, k1_b, k1_b_avgdl = self.constants
        return self.idf(term) * tf * k1_plus_1 / (tf + k1_b + k1_b_avgdl * dl)


def _ranked_in_sql(
    conn: sqlite3.Connection, tenant: str, kept: Sequence[str], bm25: _Bm25, n: int
) -> tuple[np.ndarray, np.ndarray]:
    """The best ``n`` as ``summed`` and ``best`` rank them, to the last bit: the same
    expression per posting, one column per term (a lone value's ``total`` is itself) added in
    the terms' order; only the best ``n`` rows come back to Python."""
    columns = ", ".join(
        f"total(CASE q.ord WHEN {i} THEN q.idf * p.tf * k.a / (p.tf + k.b + k.c * p.dl) END)"
        f" AS c{i}"
        for i in range(len(kept))
    )
    weights = ",".join("(?, ?, ?)" for _ in kept)
    found = conn.execute(
        f"WITH q(ord, term, idf) AS (VALUES {weights}), k(a, b, c) AS (VALUES (?, ?, ?))"
        f" SELECT memory_seq, {' + '.join(f'c{i}' for i in range(len(kept)))} AS score FROM ("
        f"  SELECT p.memory_seq, {columns}"
        "   FROM q CROSS JOIN k JOIN kw_postings p ON p.tenant = ? AND p.term = q.term"
        "   GROUP BY p.memory_seq"
        " ) ORDER BY score DESC, memory_seq LIMIT ?",
        (
            *(v for i, t in enumerate(kept) for v in (i, t, bm25.idf(t))),
            *bm25.constants,
            tenant,
            n,
        ),
    ).fetchall()
    return (
        np.array([r[0] for r in found], dtype=np.int64),
        np.array([r[1] for r in found], dtype=np.float64),
    )
