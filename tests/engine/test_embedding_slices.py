"""A write's texts are embedded in slices, so a search beside a bulk write waits for one slice
of the embedder's time, not for the whole write (issue 35, point 1)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from omoide import Memory, NewMemory
from omoide.embed.hashing import HashEmbedder
from omoide.engine.shared import activity
from omoide.engine.shared.embedding import SLICE, SLICE_SEARCHING, Embedding
from omoide.store import open_store


class Recording(HashEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[int] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(len(texts))
        return super().embed(texts)


def test_a_bulk_write_is_embedded_slice_by_slice_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(activity, "_last_search", -1e9)  # no search for a long time
    store = open_store(tmp_path / "s.db")
    try:
        recording = Recording()
        embedding = Embedding(store, recording)
        texts = [f"memory number {i} about tea" for i in range(3 * SLICE + 5)]
        vectors = embedding.try_embed(texts)
        assert recording.calls == [SLICE, SLICE, SLICE, 5]
        assert vectors is not None
        assert np.array_equal(vectors, HashEmbedder().embed(texts))  # same rows, same order
        embedding.try_embed(["one query"])
        assert recording.calls[-1] == 1
        activity.note_search()  # while searches arrive, smaller slices
        recording.calls.clear()
        again = embedding.try_embed(texts)
        assert recording.calls == [SLICE_SEARCHING] * (len(texts) // SLICE_SEARCHING) + [5]
        assert again is not None and np.array_equal(again, vectors)
    finally:
        store.close()


class Lanes(HashEmbedder):
    """Records which lane each call took: ``embed`` (bulk) or ``embed_query``."""

    def __init__(self) -> None:
        super().__init__()
        self.lanes: list[tuple[str, int]] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.lanes.append(("bulk", len(texts)))
        return super().embed(texts)

    def embed_query(self, texts: Sequence[str]) -> np.ndarray:
        self.lanes.append(("query", len(texts)))
        return super().embed(texts)


def test_a_searchs_query_takes_the_query_lane_and_writes_the_bulk_one(tmp_path: Path) -> None:
    # The query lane runs beside a write's batch instead of after it (omoide.embed.batching).
    lanes = Lanes()
    with Memory(tmp_path / "m.db", embedder=lanes, workers=0) as memory:
        memory.add_many([NewMemory(text=f"note {i} about jasmine tea") for i in range(3)])
        assert lanes.lanes[-1] == ("bulk", 3)
        lanes.lanes.clear()
        hits = memory.search("jasmine tea", recipe="vector").hits
        assert hits and lanes.lanes == [("query", 1)]


def test_an_embedder_without_a_query_lane_embeds_queries_as_before(tmp_path: Path) -> None:
    store = open_store(tmp_path / "s.db")
    try:
        recording = Recording()
        embedding = Embedding(store, recording)
        vectors = embedding.embed_query(["one query"])
        assert recording.calls == [1]
        assert np.array_equal(vectors, HashEmbedder().embed(["one query"]))
    finally:
        store.close()
