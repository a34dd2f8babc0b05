"""Migration 0005 re-segments the CJK rows written before it, so they are found afterwards.

Rows are written as a pre-0005 server wrote them (raw text, the trigger alone builds the
vector); opening the store then runs 0005 and its re-segmenting step in one transaction.
"""

from __future__ import annotations

from omoide.retrieval.terms import keyword_terms
from omoide.store.postgres import PostgresStore
from omoide.store.postgres.db import connect
from omoide.store.postgres.migrate import migrate
from omoide.types import SearchFilters
from tests.store.contract import ALICE

ROWS = {
    "m1": ("我住在深圳", ""),
    "m2": ("the next turn", "私は東京に住んでいます"),
    "m3": ("café au lait every morning", ""),
}


def test_rows_written_before_0005_are_found_by_cjk_words_after_it(pg_url: str) -> None:
    conn = connect(pg_url)
    try:
        migrate(conn, upto=4)
        for memory_id, (text, context) in ROWS.items():
            conn.execute(
                "INSERT INTO memories (id, user_id, scope_id, type, text, context, valid_from,"
                " created_at, updated_at) VALUES (%s, %s, %s, 'raw', %s, %s, 1, 1, 1)",
                (memory_id, ALICE.user_id, ALICE.scope_id, text, context),
            )
    finally:
        conn.close()
    store = PostgresStore(pg_url)  # migrates to the latest version
    try:

        def found(query: str) -> list[str]:
            terms = keyword_terms(query)
            return [h[0] for h in store.memories.keyword_search(ALICE, terms, SearchFilters(), 5)]

        assert found("深圳") == ["m1"]
        assert found("東京") == ["m2"]
        assert found("cafe") == ["m3"]  # diacritics still folded (0005 redefines the folding)
        assert found("Café") == ["m3"]
    finally:
        store.close()
