"""The embedding seam."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np


class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors.

    ``name`` identifies the model; it is recorded in the database with the dimension, so a
    database is never searched with vectors of another model. Implementations load lazily and
    raise ``omoide.EmbedderError`` on failure.

        >>> vectors = embedder.embed(["I like jasmine tea"])   # shape (1, dim)
    """

    name: str

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def normalize(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    normalized: np.ndarray = vectors / norms
    return normalized
