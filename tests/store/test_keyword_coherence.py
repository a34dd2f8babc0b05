"""Keyword search through one handle sees what another handle (another process or server) wrote.

Both backends rank from in-process posting lists kept in step with a change log in the
database; each check first warms the searching handle's lists, so only the log can tell it.
"""

from __future__ import annotations

from omoide.store.protocol import Store
from omoide.types import SearchFilters
from tests.store.contract import ALICE, Backend, add


def _ids(store: Store, words: list[str]) -> list[str]:
    return [i for i, _ in store.memories.keyword_search(ALICE, words, SearchFilters(), 20)]


def test_a_write_through_one_handle_is_found_through_another(backend: Backend) -> None:
    writer, searcher = backend.open(), backend.open()
    try:
        first = add(writer, ALICE, "green tea in the garden")
        assert _ids(searcher, ["tea", "garden"]) == [first]  # its lists are loaded now
        second = add(writer, ALICE, "jasmine tea")
        assert set(_ids(searcher, ["tea", "garden"])) == {first, second}
        with writer.transaction() as tx:
            tx.memories.update_memory(ALICE, first, "black coffee", None, "t")
        assert _ids(searcher, ["tea", "garden"]) == [second]
        assert _ids(searcher, ["coffee"]) == [first]
        with writer.transaction() as tx:
            tx.memories.delete_memory(ALICE, second, "t")
        assert _ids(searcher, ["tea", "garden"]) == []
    finally:
        searcher.close()
        writer.close()
