"""An embedder wrapper that keeps every vector it computed in a file, for repeated benchmark runs.

A LoCoMo run embeds ~800 turns and ~230 questions with the real model, minutes on a loaded
machine; the vectors of the same texts with the same model are the same, so later runs read them
from ``bench/results/`` instead. Query latency measured through it excludes the query embedding.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np


class DiskCachedEmbedder:
    """Embeds each distinct text once per cache file (keyed by the model's name and the text)."""

    def __init__(self, inner: Any, path: Path) -> None:
        self.inner = inner
        self.name = inner.name
        self.path = path
        self._cache: dict[str, np.ndarray] = {}
        self._dirty = False
        if path.exists():
            with np.load(path, allow_pickle=False) as data:
                if str(data["model"]) == self.name:
                    self._cache = dict(zip(data["keys"].tolist(), data["vectors"], strict=True))

    @staticmethod
    def _key(text: str) -> str:
        return hashlib.sha1(text.encode()).hexdigest()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        keys = [self._key(t) for t in texts]
        missing = {k: t for k, t in zip(keys, texts, strict=True) if k not in self._cache}
        if missing:
            vectors = self.inner.embed(list(missing.values()))
            self._cache.update(zip(missing, vectors, strict=True))
            self._dirty = True
        return np.stack([self._cache[k] for k in keys])

    def save(self) -> None:
        if not self._dirty:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        keys = list(self._cache)
        np.savez(
            self.path,
            model=np.array(self.name),
            keys=np.array(keys),
            vectors=np.stack([self._cache[k] for k in keys]),
        )
        self._dirty = False
