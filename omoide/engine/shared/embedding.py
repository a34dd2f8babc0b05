"""Embedding for the services: the signature check, degrade-to-job, and vector indexing.

A database remembers which embedder wrote its vectors (model name and dimension in its meta
table). ``Embedding.embed`` checks that once per process, so searching or writing with another
model fails loudly instead of mixing vector spaces. ``try_embed`` turns a retryable outage into
``None``: the write goes on and ``index`` queues an ``embed`` job for the vectors instead.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

import numpy as np

from omoide.embed.protocol import Embedder, QueryEmbedder
from omoide.engine.shared import activity
from omoide.errors import EmbedderError
from omoide.jobs.kinds import EMBED, EmbedPayload
from omoide.jobs.queue import enqueue
from omoide.observe import NO_OBSERVER, Observer
from omoide.store.protocol import Store, Tx
from omoide.types import Scope

log = logging.getLogger("omoide")

META_MODEL = "embedding_model"
META_DIM = "embedding_dim"
# Texts per embed call of a write. A search's query takes the embedder's query lane
# (``embed_query``), ahead of the writes' calls or beside them (``omoide.embed.batching``); an
# embedder without one runs one call at a time, so a bulk write embedded in one call made the
# searches beside it wait for all of its texts; in slices, for about one slice. Smaller slices
# while searches arrive (``activity``): a search waits less, the write goes a little slower.
SLICE = 32
SLICE_SEARCHING = 8


class Embedding:
    """One embedder over one store, its signature checked on first use.

    ``embedder`` may be replaced (a test swaps a failing one for a working one); the checked
    signature stays, as it did on the engine. ``observer`` hears of every ``embed`` call
    (its time and error), whichever embedder is in place. ``last_call`` is what the latest call
    said of the embedder (``time.monotonic()`` at its end, and None when it answered or the
    message of an outage): fresh evidence ``/health`` takes instead of asking again
    (``omoide.engine.embedder_health``).
    """

    def __init__(self, store: Store, embedder: Embedder, observer: Observer = NO_OBSERVER) -> None:
        self.store = store
        self.embedder = embedder
        self.checked = False
        self.last_call: tuple[float, str | None] | None = None
        self._observer = observer

    @property
    def name(self) -> str:
        return self.embedder.name

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = self.embed_unchecked(texts)
        if not self.checked:
            self._check_signature(vectors.shape[1])
        return vectors

    def embed_query(self, texts: Sequence[str]) -> np.ndarray:
        """A search's vectors (its query, its words): ahead of the writes' batches where the
        embedder can (``QueryEmbedder``), signature checked as ``embed``."""
        vectors = self._embed_call(texts, query=True)
        if not self.checked:
            self._check_signature(vectors.shape[1])
        return vectors

    def embed_unchecked(self, texts: Sequence[str]) -> np.ndarray:
        """The vectors without the signature check (a reindex changes the signature)."""
        if len(texts) > SLICE_SEARCHING:
            return self._sliced(texts)
        return self._embed_call(texts)

    def _embed_call(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        started = time.perf_counter()
        embedder = self.embedder
        try:
            if query and isinstance(embedder, QueryEmbedder):
                vectors = embedder.embed_query(texts)
            else:
                vectors = embedder.embed(texts)
        except Exception as exc:
            self._observer.embed_call(time.perf_counter() - started, _name(exc))
            if isinstance(exc, EmbedderError) and exc.retryable:  # an outage, not a bad input
                self.last_call = (time.monotonic(), exc.message)
            raise
        self._observer.embed_call(time.perf_counter() - started, None)
        self.last_call = (time.monotonic(), None)
        return vectors

    def _sliced(self, texts: Sequence[str]) -> np.ndarray:
        parts, start = [], 0
        while start < len(texts):
            size = SLICE_SEARCHING if activity.searching() else SLICE
            parts.append(self._embed_call(texts[start : start + size]))
            start += size
        return np.concatenate(parts)

    def try_embed(self, texts: Sequence[str]) -> np.ndarray | None:
        """The vectors, or None when the embedder is down (retryable): queue them instead."""
        try:
            return self.embed(texts)
        except EmbedderError as exc:
            if not exc.retryable:
                raise
            log.warning("embedding failed, queued for retry: %s", exc)
            return None

    def record_signature(self, tx: Tx, dim: int) -> None:
        """Make the current embedder the database's (reindex)."""
        tx.admin.set_meta(META_MODEL, self.embedder.name)
        tx.admin.set_meta(META_DIM, str(dim))
        self.checked = True

    def forget_signature(self) -> None:
        """After a reset: the next embedder becomes the database's."""
        self.checked = False

    def _check_signature(self, dim: int) -> None:
        model = self.store.admin.get_meta(META_MODEL)
        stored_dim = self.store.admin.get_meta(META_DIM)
        if model is None:
            with self.store.transaction() as tx:
                self.record_signature(tx, dim)
            return
        if model != self.embedder.name or int(stored_dim or 0) != dim:
            raise EmbedderError(
                f"this database was embedded with {model} ({stored_dim}-d) but the embedder is "
                f"{self.embedder.name} ({dim}-d); run `omoide reindex` to re-embed it",
                retryable=False,
                mismatch=True,
            )
        self.checked = True


def _name(error: BaseException) -> str:
    return type(error).__name__


def index(tx: Tx, scope: Scope, memory_ids: list[str], vectors: np.ndarray | None) -> int | None:
    """Store the vectors computed before the transaction, or queue an embed job (its id)."""
    if not memory_ids:
        return None
    if vectors is None:
        return enqueue(tx.jobs, scope, EMBED, EmbedPayload(memory_ids=memory_ids))
    tx.memories.put_vectors(scope, memory_ids, vectors)
    return None
