"""Keyword search over Chinese, Japanese, Korean and mixed-script text, on both backends.

Neither FTS5's tokenizer nor PostgreSQL's parser splits an unsegmented CJK run, so the stores
index ``omoide.segment``'s output and queries go through the same segmentation
(``keyword_terms``, as the search service calls it): ``深圳`` finds ``我住在深圳``.
"""

from __future__ import annotations

import pytest

from omoide.retrieval.terms import keyword_terms
from omoide.store.ports.memories import MemoryReads, MemoryWrites, NewMemory
from omoide.store.protocol import Store
from omoide.types import SearchFilters
from tests.store.contract import ALICE, BOB, add, covers


def _found(store: Store, query: str) -> list[str]:
    hits = store.memories.keyword_search(ALICE, keyword_terms(query), SearchFilters(), 10)
    return [h[0] for h in hits]


CASES = [
    ("我住在深圳", "深圳"),  # Chinese: the example
    ("我住在深圳市南山区", "南山"),
    ("我喜欢茉莉花茶", "茶"),  # one character
    ("私は東京に住んでいます", "東京"),  # Japanese: kanji between kana
    ("コーヒーが大好きです", "コーヒー"),  # katakana
    ("서울에 살아요", "서울"),  # Korean
    ("我在Shenzhen工作", "Shenzhen"),  # mixed script: the Latin word alone
    ("我在Shenzhen工作", "工作"),  # and the CJK word after it
    ("I love running in 深圳 every day", "run"),  # English words still stemmed
]


@pytest.mark.parametrize(("stored", "query"), CASES)
@covers(MemoryReads.keyword_search, MemoryWrites.insert_memory)
def test_a_cjk_word_finds_the_text_holding_it(store: Store, stored: str, query: str) -> None:
    wanted = add(store, ALICE, stored)
    add(store, ALICE, "an English sentence about tea")
    add(store, ALICE, "我喜欢北京" if "北京" not in query else "我喜欢上海")
    assert _found(store, query) == [wanted]


@covers(MemoryReads.keyword_search, MemoryWrites.insert_memories)
def test_cjk_text_written_in_bulk_is_found(store: Store) -> None:
    with store.transaction() as tx:
        items = tx.memories.insert_memories(
            ALICE, [NewMemory(text="我住在深圳"), NewMemory(text="私は東京に住んでいます")], "t"
        )
    assert _found(store, "深圳") == [items[0].id]
    assert _found(store, "東京") == [items[1].id]


@covers(MemoryReads.keyword_search, MemoryWrites.update_memory, MemoryWrites.set_context)
def test_edited_text_and_context_are_segmented_again(store: Store) -> None:
    memory_id = add(store, ALICE, "我住在深圳")
    with store.transaction() as tx:
        tx.memories.update_memory(ALICE, memory_id, "我搬到了杭州", None, "t")
    assert _found(store, "深圳") == []
    assert _found(store, "杭州") == [memory_id]
    with store.transaction() as tx:
        tx.memories.update_memory(ALICE, memory_id, "now in Hangzhou", None, "t")
    assert _found(store, "杭州") == []
    assert _found(store, "Hangzhou") == [memory_id]
    other = add(store, ALICE, "the next turn")
    with store.transaction() as tx:
        tx.memories.set_context(ALICE, other, "我喜欢茉莉花茶")
    assert _found(store, "茉莉") == [other]


@covers(MemoryReads.keyword_search)
def test_a_cjk_search_never_crosses_tenants(store: Store) -> None:
    add(store, BOB, "我住在深圳")
    assert _found(store, "深圳") == []
    mine = add(store, ALICE, "我也住在深圳")
    assert _found(store, "深圳") == [mine]
