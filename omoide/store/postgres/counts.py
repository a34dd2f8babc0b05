"""A tenant's counts from its delta rows (``tenant_counts``, migration 0006), and their folding.

The database appends the deltas (statement triggers on ``memories`` and ``memory_vectors``);
a read sums the tenant's rows in the reader's own snapshot, so the figures agree exactly with
a ``count(*)`` in that snapshot. Reading costs one index range scan over the tenant's delta
rows: ``compact`` folds them into one row when there are more than ``COMPACT_AT``, called by
the writers after their commit (``upkeep``), never by a search.

Folding is one ``READ COMMITTED`` transaction: ``DELETE ... RETURNING`` the rows its
statement snapshot sees, ``INSERT`` their sum. A reader's snapshot holds either the old rows or
the sum, never both (one commit); a writer's rows committed later, or still running, are not
in that snapshot, so they are neither deleted nor summed, and stay. Two folders of one tenant:
the second one's transaction-level advisory lock try fails while the first runs, so it skips
(without the lock it would wait on the first one's deleted rows, then skip them, still
exact). Folding runs in its own transaction, never inside a caller's, so a
``REPEATABLE READ`` transaction never meets a concurrently deleted delta row.

The tenant's document frequencies (``lexeme_counts``, migration 0007) are delta rows too,
one per lexeme and statement, folded in the same transaction (``fold_lexemes``), which also
drops the lexemes whose rows sum to zero: the words of deleted memories. One exception to
"never inside a caller's": deleting a tenant (``admin.delete_scope``) folds its lexemes in
its own transaction, after waiting for the tenant's lock (write transactions run at the
server's default level, ``READ COMMITTED``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import psycopg
from psycopg.rows import DictRow

from omoide.errors import StoreError
from omoide.store.postgres.db import Conn, Database

log = logging.getLogger("omoide.store")

COMPACT_AT = 32  # delta rows a read may sum before it asks for a fold
_LOCK = 0x6F6D6F63  # advisory-lock class of our own: one folder per tenant at a time

# Parameters: user_id, scope_id. avgdl as ``avg(doc_len)`` over the rows computes it (numeric
# sum / count), at least 1
SQL = """
SELECT coalesce(sum(memories), 0)::bigint AS memories, coalesce(sum(vectors), 0)::bigint AS vectors,
    greatest(coalesce(sum(doc_len) / nullif(sum(memories), 0), 1), 1)::float8 AS avgdl,
    count(*) AS deltas
FROM tenant_counts WHERE user_id = %s AND scope_id = %s
"""
_FOLD = """
WITH gone AS (
    DELETE FROM tenant_counts WHERE user_id = %s AND scope_id = %s
    RETURNING memories, doc_len, vectors
)
INSERT INTO tenant_counts (user_id, scope_id, memories, doc_len, vectors)
SELECT %s, %s, sum(memories), sum(doc_len), sum(vectors) FROM gone
HAVING sum(memories) <> 0 OR sum(doc_len) <> 0 OR sum(vectors) <> 0
"""

# The tenant's lexemes of several delta rows, or of a zero sum (the words of deleted memories),
# folded as the counters are. The lexemes to fold are aggregated once into a materialized CTE
# (one range scan of the tenant's rows), then joined back to those rows by hash: linear in the
# tenant's rows whatever the statistics say. Run as an ``IN (subquery)`` right after a bulk
# load, with no statistics yet, the planner estimated one lexeme and re-aggregated the subquery
# for every row (a nested loop): quadratic, minutes at 30k memories. ``LINEAR`` forbids the
# nested loop and the merge join for the statement's transaction, so the hash join is the plan.
_FOLD_LEXEMES = """
WITH folded AS MATERIALIZED (
    SELECT lexeme FROM lexeme_counts WHERE user_id = %s AND scope_id = %s
    GROUP BY lexeme HAVING count(*) > 1 OR sum(df) = 0
),
gone AS (
    DELETE FROM lexeme_counts l USING folded f
    WHERE l.user_id = %s AND l.scope_id = %s AND l.lexeme = f.lexeme
    RETURNING l.lexeme, l.df
)
INSERT INTO lexeme_counts (user_id, scope_id, lexeme, df)
SELECT %s, %s, lexeme, sum(df) FROM gone GROUP BY lexeme HAVING sum(df) <> 0
"""
# One round trip for the three settings (SET LOCAL = set_config(..., true)); maintenance may
# take long on a large tenant, so the pool's statement timeout (a search's) is lifted.
LINEAR = (
    "SELECT set_config('enable_nestloop', 'off', true), set_config('enable_mergejoin', 'off',"
    " true), set_config('statement_timeout', '0', true)"
)


@dataclass(frozen=True)
class Counts:
    """A tenant's memories (valid or not), their average document length (1 when none) and
    vectors; ``deltas`` is how many rows the sum read."""

    memories: int
    avgdl: float
    vectors: int
    deltas: int


def read(conn: Conn, user_id: str, scope_id: str) -> Counts:
    row = conn.execute(SQL, (user_id, scope_id)).fetchone()
    if row is None:  # an aggregate always returns a row
        return Counts(0, 1.0, 0, 0)
    return from_row(row)


def from_row(row: DictRow) -> Counts:
    """The counts of a row with ``SQL``'s columns (read by ``SQL`` as a CTE of a search)."""
    return Counts(int(row["memories"]), float(row["avgdl"]), int(row["vectors"]), row["deltas"])


def unembedded(conn: Conn) -> int:
    """Memories without a vector, over every tenant."""
    row = conn.execute(
        "SELECT coalesce(sum(memories) - sum(vectors), 0)::bigint AS n FROM tenant_counts"
    ).fetchone()
    return max(0, int(row["n"])) if row else 0


def compact(db: Database, user_id: str, scope_id: str) -> None:
    """Fold the tenant's delta rows into one (see the module docstring). Best effort: a
    failure leaves the deltas, whose sum is still right, and is logged."""
    try:
        with db.write(isolation=psycopg.IsolationLevel.READ_COMMITTED) as conn:
            got = conn.execute(
                "SELECT pg_try_advisory_xact_lock(%s, hashtext(%s || chr(31) || %s)) AS ok",
                (_LOCK, user_id, scope_id),
            ).fetchone()
            if got is None or not got["ok"]:
                return  # another process is folding this tenant
            conn.execute(_FOLD, (user_id, scope_id, user_id, scope_id))
            fold_lexemes(conn, user_id, scope_id)
    except StoreError as exc:
        log.warning("folding the counters of a tenant failed (%s): they stay unfolded", exc)


def fold_lexemes(conn: Conn, user_id: str, scope_id: str) -> None:
    """Fold the tenant's document-frequency deltas (``lexeme_counts``), in ``conn``'s
    transaction: ``READ COMMITTED``, where the sum inserted is that of the rows this statement
    deleted, so it is exact whatever runs beside it."""
    tenant = (user_id, scope_id)
    conn.execute(LINEAR)
    conn.execute(_FOLD_LEXEMES, (*tenant, *tenant, *tenant))


def fold_all_lexemes(conn: Conn) -> None:
    """``fold_lexemes`` for every tenant at once (after deleting everything)."""
    conn.execute(
        "WITH gone AS (DELETE FROM lexeme_counts RETURNING user_id, scope_id, lexeme, df)"
        " INSERT INTO lexeme_counts (user_id, scope_id, lexeme, df)"
        " SELECT user_id, scope_id, lexeme, sum(df) FROM gone"
        " GROUP BY user_id, scope_id, lexeme HAVING sum(df) <> 0"
    )


def lock_tenant(conn: Conn, user_id: str, scope_id: str) -> None:
    """Wait for the tenant's fold lock (``compact`` skips while it is held), for this
    transaction."""
    conn.execute(
        "SELECT pg_advisory_xact_lock(%s, hashtext(%s || chr(31) || %s))",
        (_LOCK, user_id, scope_id),
    )


def fold_if_needed(db: Database, user_id: str, scope_id: str, counts: Counts) -> None:
    if counts.deltas > COMPACT_AT:
        compact(db, user_id, scope_id)
