"""The embedding seam."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

# The name's suffix of the local model's vectors through int8 products (OMOIDE_EMBED_RUNTIME=
# onnx-int8): close to the float vectors but not equal, so never under the same name.
INT8_SUFFIX = "+int8"


class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors.

    ``name`` identifies the model; it is recorded in the database with the dimension, so a
    database is never searched with vectors of another model. Implementations load lazily and
    raise ``omoide.EmbedderError`` on failure.

        >>> vectors = embedder.embed(["I like jasmine tea"])   # shape (1, dim)
    """

    name: str

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


@runtime_checkable
class QueryEmbedder(Protocol):
    """An embedder that runs a search's query ahead of bulk work (``omoide.embed.batching``):
    ``embed_query`` gives the vectors ``embed`` gives but does not queue behind the writes'
    batches. An embedder without it embeds queries with ``embed``."""

    name: str

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_query(self, texts: Sequence[str]) -> np.ndarray: ...


@runtime_checkable
class Remote(Protocol):
    """An embedder behind a network endpoint (``omoide.embed.remote``), which ``/health`` asks
    for real: ``check`` embeds one short text within ``timeout`` seconds and raises
    ``omoide.EmbedderError`` when that fails. ``endpoint`` is its base URL as configured (it
    may carry credentials: redact it before showing it)."""

    name: str
    endpoint: str

    def check(self, timeout: float) -> None: ...


def normalize(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    normalized: np.ndarray = vectors / norms
    return normalized
