"""Re-segmenting the rows written before migration 0005, inside that migration's transaction.

The SQL of a migration cannot call ``omoide.segment`` (jieba is Python), so the migration
runner calls ``resegment`` right after 0005's SQL, before its version row commits: a database
is never at version 5 with CJK rows indexed unsegmented, and a failure leaves it at 4.
"""

from __future__ import annotations

from omoide.segment import CJK_RUN
from omoide.store.postgres.bulk import segmented
from omoide.store.postgres.db import Conn

BATCH = 1_000

# The same character classes as omoide.segment, as a PostgreSQL regular expression.
_CJK = CJK_RUN.pattern.removesuffix("+")
_UPDATE = """
UPDATE memories m SET text_seg = u.text_seg, context_seg = u.context_seg
FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[]) AS u(user_id, id, text_seg, context_seg)
WHERE m.user_id = u.user_id AND m.id = u.id
"""


def resegment(conn: Conn) -> int:
    """Store the segmented text and context of every memory holding CJK text (the trigger then
    rebuilds its full-text vector); return how many rows changed."""
    changed = 0
    last = ("", "")
    while True:
        found = conn.execute(
            "SELECT user_id, id, text, context FROM memories"
            " WHERE (user_id, id) > (%s, %s) AND (text ~ %s OR context ~ %s)"
            " ORDER BY user_id, id LIMIT %s",
            (*last, _CJK, _CJK, BATCH),
        ).fetchall()
        if not found:
            return changed
        conn.execute(
            _UPDATE,
            (
                [r["user_id"] for r in found],
                [r["id"] for r in found],
                [segmented(r["text"]) for r in found],
                [segmented(r["context"]) for r in found],
            ),
        )
        changed += len(found)
        last = (found[-1]["user_id"], found[-1]["id"])
