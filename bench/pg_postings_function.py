"""PostgreSQL ingest with 0009's ``memory_postings`` and with 0006's (before 0009).

Two schemas of one server, both migrated to the latest version; in one, 0009 is undone again
(0006's function restored). ``--items`` memories of ``bench/scale.py``'s corpus, each with its
neighbours' texts as context, go into one tenant of each through the store port, batches of
1,000 alternating between the schemas (``pg_lexeme_counts.load``). Then the two schemas'
postings are compared row by row (lexeme, seq, length, weight, to the bit; seqs agree since
both schemas were filled in the same order): they must be identical.

    python bench/pg_postings_function.py --items 30000
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from pg_lexeme_counts import loaded_pair

MIGRATIONS = Path(__file__).resolve().parent.parent / "omoide/store/postgres/migrations"
_ROWS = "SELECT lexeme, seq, doc_len, w FROM {}.memory_terms"


def undo_0009(url: str) -> None:
    import psycopg

    sql = (MIGRATIONS / "0006_tenant_counts.sql").read_text()
    function = re.search(r"CREATE FUNCTION memory_postings\(.*?\n\$\$;\n", sql, re.S)
    assert function is not None
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(function.group(0).replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION"))


def main() -> None:
    import psycopg

    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--items", type=int, default=30_000)
    args = parser.parse_args()
    base, server, _, spent = loaded_pair(("now", "before"), undo_0009, args.items)
    with psycopg.connect(base, autocommit=True) as conn:
        row = conn.execute(
            f"SELECT (SELECT count(*) FROM now.memory_terms),"
            f" (SELECT count(*) FROM ({_ROWS.format('now')} EXCEPT ALL"
            f" {_ROWS.format('before')}) a) + (SELECT count(*) FROM ({_ROWS.format('before')}"
            f" EXCEPT ALL {_ROWS.format('now')}) b)"
        ).fetchone()
    server.cleanup()
    assert row is not None
    before, now = args.items / spent["before"], args.items / spent["now"]
    print(f"{args.items:,} memories in one tenant, {row[0]:,} postings")
    print(f"ingest items/s: before 0009 {before:.0f}, with 0009 {now:.0f} ({now / before:.2f}x)")
    print(f"postings that differ: {row[1]}")


if __name__ == "__main__":
    main()
