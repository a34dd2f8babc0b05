"""PostgreSQL ingest and keyword search with the postings keyed by seq (migration 0008) and by
memory id (before it).

Two schemas of one server, both migrated to the latest version; in one, 0008 is undone again
(the postings' primary key back to ``(user_id, scope_id, lexeme, memory_id)``, ``memories_seq``
dropped, 0006's trigger function restored). ``--items`` memories of ``bench/scale.py``'s corpus,
each with its neighbours' texts as context, go into one tenant of each through the store port,
batches of 1,000 alternating between the schemas (``pg_lexeme_counts.load``). Then ``VACUUM
ANALYZE`` and, for each LoCoMo question, the keyword statement of each schema (``fts._SEARCH``,
and the same as it was before 0008 on the other schema), alternated question by question,
limit 120 (hybrid's keyword fetch); their results (seqs and scores) must be identical.

    python bench/pg_postings_key.py --items 100000 --queries 200
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from pg_lexeme_counts import SCOPE, arguments, loaded_pair, report
from scale import questions

from omoide.retrieval.terms import keyword_terms
from omoide.store.postgres import fts
from omoide.store.postgres.filters import memory_filter
from omoide.types import SearchFilters

MIGRATIONS = Path(__file__).resolve().parent.parent / "omoide/store/postgres/migrations"
# fts._SEARCH as it was before 0008: rows grouped and probed by memory id
_BY_ID = [
    ("SELECT p.seq, sum(idf.idf", "SELECT p.memory_id, p.seq, sum(idf.idf"),
    ("GROUP BY p.seq\n", "GROUP BY p.memory_id, p.seq\n"),
    ("SELECT seq, score, row_number()", "SELECT memory_id, seq, score, row_number()"),
    ("SELECT h.seq, h.score", "SELECT h.memory_id, h.seq, h.score"),
    ("t.lexeme = d.lexeme AND t.seq = h.seq", "t.lexeme = d.lexeme AND t.memory_id = h.memory_id"),
    ("SELECT seq, score, true FROM", "SELECT memory_id, seq, score, true FROM"),
    ("SELECT f.id, r.seq, r.tail", "SELECT r.memory_id AS id, r.seq, r.tail"),
    ("(SELECT seq, tail, score FROM ranked", "(SELECT memory_id, seq, tail, score FROM ranked"),
    (
        "SELECT m.id FROM memories m WHERE m.user_id = %s AND m.seq = r.seq",
        "SELECT 1 FROM memories m WHERE m.user_id = %s AND m.id = r.memory_id",
    ),
]


def before_0008(statement: str) -> str:
    for now, then in _BY_ID:
        assert statement.count(now) == 1, now
        statement = statement.replace(now, then)
    return statement


def undo_0008(url: str) -> None:
    import psycopg

    sql = (MIGRATIONS / "0006_tenant_counts.sql").read_text()
    function = re.search(r"CREATE FUNCTION tenant_counts_memories\(\).*?\n\$\$;\n", sql, re.S)
    assert function is not None
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ALTER TABLE memory_terms DROP CONSTRAINT memory_terms_pkey")
        conn.execute(
            "ALTER TABLE memory_terms ADD PRIMARY KEY (user_id, scope_id, lexeme, memory_id)"
            " INCLUDE (seq, doc_len, w)"
        )
        conn.execute("DROP INDEX memories_seq")
        conn.execute(function.group(0).replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION"))


def main() -> None:
    import psycopg
    import psycopg.rows

    args = arguments(__doc__)
    _, server, urls, spent = loaded_pair(("by_seq", "by_id"), undo_0008, args.items)
    where = memory_filter(SCOPE, SearchFilters())
    statement = fts._SEARCH.replace("{where}", where[0])
    statements = {"by_seq": statement, "by_id": before_0008(statement)}
    sizes = {}
    conns = {}
    for name, url in urls.items():
        conn = psycopg.connect(url, autocommit=True, row_factory=psycopg.rows.dict_row)
        conn.execute("VACUUM ANALYZE")
        sizes[name] = conn.execute(
            "SELECT pg_relation_size('memory_terms_pkey') AS key,"
            " (SELECT count(*) FROM memory_terms) AS n"
        ).fetchone()
        conns[name] = conn
    tenant = [SCOPE.user_id, SCOPE.scope_id]
    timings: dict[str, list[float]] = {name: [] for name in urls}
    differ = 0
    for n, question in enumerate(questions(args.queries)):
        text = " ".join(keyword_terms(question))
        params = [*tenant, text, *tenant, *tenant, *tenant, SCOPE.user_id, *where[1], args.limit]
        got = {}
        for name in ("by_seq", "by_id") if n % 2 else ("by_id", "by_seq"):
            start = time.perf_counter()
            rows = conns[name].execute(statements[name], params).fetchall()
            timings[name].append((time.perf_counter() - start) * 1000)
            ids = [r["id"] for r in rows if r["id"] is not None]
            seqs = {  # memory ids differ between the schemas; seqs follow the same order
                r["id"]: r["seq"]
                for r in conns[name].execute(
                    "SELECT id, seq FROM memories WHERE id = ANY(%s)", (ids,)
                )
            }
            got[name] = [(seqs[r["id"]], r["score"]) for r in rows if r["id"] is not None]
        differ += got["by_seq"] != got["by_id"]
    for conn in conns.values():
        conn.close()
    server.cleanup()
    print(f"{args.items:,} memories in one tenant, {sizes['by_seq']['n']:,} postings")
    for name in urls:
        print(f"postings key {name}: {sizes[name]['key'] / 1e6:.0f} MB")
    report(
        {"keyed by id": args.items / spent["by_id"], "by seq": args.items / spent["by_seq"]},
        {"by id": timings["by_id"], "by seq": timings["by_seq"]},
    )
    print(f"questions whose results differ: {differ} of {args.queries}")


if __name__ == "__main__":
    main()
