"""Keyword search on PostgreSQL: FTS5's bm25 scale, computed from the tenant's own rows."""

from __future__ import annotations

from pathlib import Path

from omoide.store import open_store
from omoide.store.postgres import PostgresStore
from omoide.store.protocol import Store
from omoide.types import Scope, SearchFilters
from tests.store.contract import ALICE, BOB, add

TEXTS = [
    "we planted tomatoes and basil in the garden",
    "the garden needs water every morning in summer",
    "tomatoes ripen late in a cold summer",
    "my sister visited the botanical garden in Kyoto",
    "basil pesto with pine nuts and garlic",
    "water the basil twice a week",
]
QUERIES = [["garden"], ["tomatoes", "basil"], ["summer", "water", "garden"], ["kyoto"]]


def _ranked(store: Store, scope: Scope, terms: list[str]) -> list[tuple[str, float]]:
    return store.memories.keyword_search(scope, terms, SearchFilters(), 10)


def test_scores_match_sqlite_bm25_on_the_same_rows(pg_store: PostgresStore, tmp_path: Path) -> None:
    """One tenant, plain English words: the same order and the same scores as FTS5's bm25
    (the SQLite backend's scale), to float precision."""
    sqlite = open_store(tmp_path / "same.db")
    try:
        pg_ids = [add(pg_store, ALICE, t) for t in TEXTS]
        sq_ids = [add(sqlite, ALICE, t) for t in TEXTS]
        for terms in QUERIES:
            pg = [(pg_ids.index(i), round(s, 6)) for i, s in _ranked(pg_store, ALICE, terms)]
            sq = [(sq_ids.index(i), round(s, 6)) for i, s in _ranked(sqlite, ALICE, terms)]
            assert pg == sq, terms
    finally:
        sqlite.close()


def test_a_tenants_ranking_does_not_depend_on_other_tenants(pg_store: PostgresStore) -> None:
    for text in TEXTS:
        add(pg_store, ALICE, text)
    before = {tuple(q): _ranked(pg_store, ALICE, q) for q in QUERIES}
    for n in range(40):  # another tenant full of one of the query words
        add(pg_store, BOB, f"garden garden note {n} about tomatoes")
    after = {tuple(q): _ranked(pg_store, ALICE, q) for q in QUERIES}
    assert after == before
    assert {i for i, _ in _ranked(pg_store, BOB, ["garden"])}.isdisjoint(
        {i for q in before.values() for i, _ in q}
    )


def test_the_memory_text_weighs_more_than_its_neighbour_context(pg_store: PostgresStore) -> None:
    in_text = add(pg_store, ALICE, "jasmine tea", context="we talked")
    in_context = add(pg_store, ALICE, "we talked", context="jasmine tea")
    found = _ranked(pg_store, ALICE, ["jasmine"])
    assert [i for i, _ in found] == [in_text, in_context]
    assert found[0][1] > found[1][1] > 0


def test_query_terms_are_never_tsquery_syntax(pg_store: PostgresStore) -> None:
    target = add(pg_store, ALICE, "it's a back\\slash and a pipe | or & and !bang")
    for terms in (["it's"], ["back\\slash"], ["|", "&", "!", "(", ":*"], ["'"], ["bang:*"]):
        _ranked(pg_store, ALICE, terms)  # never a syntax error
    assert [i for i, _ in _ranked(pg_store, ALICE, ["bang"])] == [target]
    assert _ranked(pg_store, ALICE, ["!", "&"]) == []


def test_diacritics_and_stems_match_as_in_sqlite(pg_store: PostgresStore) -> None:
    target = add(pg_store, ALICE, "Café crème in Zürich, gardening daily")
    for term in ("cafe", "CAFÉ", "zurich", "creme", "garden", "gardens"):
        assert [i for i, _ in _ranked(pg_store, ALICE, [term])] == [target], term
