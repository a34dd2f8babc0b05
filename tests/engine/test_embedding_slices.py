"""A write's texts are embedded in slices, so a search beside a bulk write waits for one slice
of the embedder's time, not for the whole write (issue 35, point 1)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

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
