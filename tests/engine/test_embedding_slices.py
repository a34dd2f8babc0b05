"""A write's texts are embedded in slices, so a search beside a bulk write waits for one slice
of the embedder's time, not for the whole write (issue 35, point 1)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from omoide.embed.hashing import HashEmbedder
from omoide.engine.shared.embedding import SLICE, Embedding
from omoide.store import open_store


class Recording(HashEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[int] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(len(texts))
        return super().embed(texts)


def test_a_bulk_write_is_embedded_slice_by_slice_in_order(tmp_path: Path) -> None:
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
    finally:
        store.close()
