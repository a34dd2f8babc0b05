"""CJK segmentation for the keyword index and queries (omoide/segment.py)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from omoide import Memory
from omoide import segment as seg
from omoide.embed.protocol import Embedder
from omoide.retrieval.terms import MAX_TERMS, keyword_terms
from omoide.segment import cjk_tokens, segment, segment_query
from omoide.types import MemoryType


def _tokens(text: str) -> set[str]:
    return set(text.split())


@pytest.fixture
def without_jieba(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """jieba made unimportable, as on an install without the ``cjk`` extra."""
    monkeypatch.setitem(sys.modules, "jieba", None)
    seg._jieba.cache_clear()
    yield
    seg._jieba.cache_clear()


@pytest.fixture(params=["jieba", "bigrams only"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Both segmenters: with jieba (skipped when it is not installed) and without."""
    if request.param == "jieba":
        pytest.importorskip("jieba")
    else:
        monkeypatch.setitem(sys.modules, "jieba", None)
    seg._jieba.cache_clear()
    yield str(request.param)
    seg._jieba.cache_clear()


def test_text_without_cjk_is_unchanged(mode: str) -> None:
    text = "What does the user like to drink? I'd say jasmine tea, 42 cups."
    assert segment(text) == text and segment_query(text) == text
    assert keyword_terms(text) == ["user", "like", "drink", "say", "jasmine", "tea", "42", "cups"]


@pytest.mark.parametrize(
    ("stored", "query"),
    [
        ("我住在深圳", "深圳"),  # the example
        ("我住在深圳市南山区", "南山"),
        ("我喜欢茉莉花茶", "茶"),  # one character
        ("我喜欢茉莉花茶", "茉莉花茶"),
        ("私は東京に住んでいます", "東京"),  # Japanese: kanji
        ("カタカナのコーヒーが好きです", "コーヒー"),  # Japanese: katakana
        ("서울에 살아요", "서울"),  # Korean: a particle glued to the word
        ("我在Shenzhen工作", "工作"),  # mixed scripts
        ("我在Shenzhen工作", "shenzhen"),
    ],
)
def test_a_query_term_is_a_token_of_the_indexed_text(mode: str, stored: str, query: str) -> None:
    indexed = _tokens(segment(stored).lower())
    assert set(keyword_terms(query)) & indexed, (keyword_terms(query), indexed)


def test_mixed_script_runs_are_split_at_the_script_boundary(mode: str) -> None:
    assert _tokens(segment("我在Shenzhen工作, I like tea")) >= {"Shenzhen", "工作", "like", "tea"}
    jieba_words = ["住"] if mode == "jieba" else []
    assert keyword_terms("住在Berlin吗") == ["住在", *jieba_words, "berlin"]


def test_query_keeps_the_whole_run_for_text_indexed_before_segmentation(mode: str) -> None:
    assert keyword_terms("我住在深圳")[0] == "我住在深圳"
    assert "深圳" in keyword_terms("我住在深圳")


def test_function_characters_are_not_query_terms(mode: str) -> None:
    assert "的" not in keyword_terms("我的茶")
    assert "我的" in keyword_terms("我的茶")  # as part of a bigram they still count


def test_jieba_adds_whole_words(mode: str) -> None:
    tokens = cjk_tokens("中华人民共和国")
    assert {"中华", "人民", "共和"} <= set(tokens)  # bigrams, always
    assert ("共和国" in tokens) == (mode == "jieba")


def test_without_jieba_the_bigrams_still_find_the_word(without_jieba: None) -> None:
    assert not seg.has_jieba()
    assert cjk_tokens("深圳市", query=True) == ["深圳市", "深圳", "圳市"]
    assert cjk_tokens("深圳") == ["深", "圳", "深圳"]


def test_terms_are_capped_for_a_long_chinese_query(mode: str) -> None:
    assert len(keyword_terms("我住在深圳" * 40)) <= 60


def test_keyword_search_finds_a_chinese_word(tmp_path: Path, embedder: Embedder) -> None:
    memory = Memory(tmp_path / "cjk.db", embedder=embedder, workers=0)
    try:
        memory.add("我住在深圳", type=MemoryType.SEMANTIC, infer=False)
        hits = memory.search("深圳", recipe="keyword").hits
        assert [h.memory.text for h in hits] == ["我住在深圳"]
    finally:
        memory.close()


def test_jieba_reads_a_long_run_in_pieces_and_keeps_its_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """jieba's time grows with the square of a run it cannot split: a long run reaches it in
    pieces of ``JIEBA_PIECE`` characters at most, every character once, and its words stay."""
    pytest.importorskip("jieba")
    seg._jieba.cache_clear()
    real = seg._jieba()
    assert real is not None
    seen: list[int] = []

    def cut(text: str) -> Iterator[str]:
        seen.append(len(text))
        yield from real(text)

    monkeypatch.setattr(seg, "_jieba", lambda: cut)
    run = "中华人民共和国" * 1000
    tokens = cjk_tokens(run)
    assert max(seen) <= seg.JIEBA_PIECE and sum(seen) == len(run)
    assert {"共和国", "中华", "人民"} <= set(tokens)


def test_a_long_chinese_query_is_segmented_only_as_far_as_its_terms_go(
    monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    """A query keeps its first ``MAX_TERMS`` terms, a run's bigrams first: a run of 99,000
    characters is read as far as those, not segmented whole."""
    text = "".join(chr(0x4E00 + (i * 7919) % 20000) for i in range(99_000))
    seen: list[int] = []
    real = seg.cjk_tokens

    def tokens(run: str, *, query: bool = False) -> list[str]:
        seen.append(len(run))
        return real(run, query=query)

    monkeypatch.setattr(seg, "cjk_tokens", tokens)
    terms = keyword_terms(text)
    bigrams = list(dict.fromkeys(text[i : i + 2] for i in range(200)))
    assert terms[1:] == bigrams[: MAX_TERMS - 1] and terms[0] == text[: len(terms[0])]
    assert sum(seen) <= 4 * MAX_TERMS
