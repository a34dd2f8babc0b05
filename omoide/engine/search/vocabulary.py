"""``Vocabulary``: unit vectors of a fixed list of common words, embedded once per machine.

Query expansion compares a query's words with the words of its top hits
(``omoide.retrieval.expansion``). Embedded on demand, those words cost a cold search ~12 ms at
100k memories (bench/README.md), and a cache that tenants share let a search's speed tell which
words other tenants' hits held. The list (``vocabulary.txt``: the 21,250 lower-case, alphabetic
whole words of three letters or more in all-MiniLM-L6-v2's WordPiece vocabulary, stopwords left
out) covers ~96% of the words of LoCoMo's turns and depends on no tenant's data.

A background thread embeds the list in chunks of ``CHUNK`` words (~10 s on 2 cores in all, more
while searches arrive: it yields to them, see ``YIELD``) and
saves each chunk as ``<dir>/<model>-words-<digest>.<chunk>.npy`` (a temporary file, then a
rename), so a short-lived process (one CLI search) still leaves its finished chunks to the
next. A process loads the chunks already saved and embeds only the missing ones; until a word's
chunk is there, its searches embed the word on demand (``word_vectors.py``). One table per
model and directory serves the whole process, whichever engine asks.

While a build runs, its embed calls share batches with the searches' own
(``omoide.embed.batching``), which moves their vectors in the last float bits (other padding).
Where results must repeat bit for bit (the test suite), ``OMOIDE_WORD_TABLE_BUILD=false`` only
loads a saved table.
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import os
import re
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from functools import lru_cache
from importlib import resources
from pathlib import Path

import numpy as np

from omoide.embed.protocol import normalize
from omoide.engine.shared import activity

log = logging.getLogger("omoide")

CHUNK = 1_024
# Words per embed call: an embedder runs one call at a time (``omoide.embed.batching``), so a
# search's query waits for at most one of these, not for a whole chunk.
BATCH = 8
RETRY_S = 60.0  # a build that failed (an embedder down for a while) starts again after this
# While searches arrive (``activity.searching``), the build yields: after each batch it rests
# ``YIELD`` times what the batch took, so it holds the embedder and a core at most
# 1 / (1 + YIELD) of the time. Idle, it runs at full speed. Its words are embedded on demand
# by the searches meanwhile (``word_vectors.py``), so a slower build costs no result.
YIELD = 6.0


Embed = Callable[[Sequence[str]], np.ndarray]


@lru_cache(maxsize=1)
def common_words() -> tuple[str, ...]:
    text = resources.files("omoide.engine.search").joinpath("vocabulary.txt").read_text("utf-8")
    return tuple(text.split())


class Vocabulary:
    """``embed`` gives vectors of words (any scale: they are normalised here); ``directory``
    keeps the chunks (None: this process only); ``chunk`` words are saved per file."""

    def __init__(
        self,
        embed: Embed,
        model: str,
        directory: Path | None,
        words: Sequence[str],
        chunk: int = CHUNK,
        *,
        build: bool = True,
    ) -> None:
        self._embed: Embed | None = embed
        self._chunk = chunk
        self._build_missing = build
        self._words = list(words)
        self._rows = {w: i for i, w in enumerate(self._words)}
        self._chunks: dict[int, np.ndarray] = {}
        digest = hashlib.sha256("\n".join([model, *self._words]).encode()).hexdigest()[:16]
        slug = re.sub(r"[^A-Za-z0-9._-]+", "-", model.rsplit("/", 1)[-1])
        self._stem = directory / f"{slug}-words-{digest}" if directory is not None else None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._fill, name="omoide-vocabulary", daemon=True)
        self.failed = False
        self.failed_at = 0.0

    def knows(self, word: str) -> bool:
        """Whether ``word`` is in the table's list (whether or not its chunk is ready)."""
        return word in self._rows

    def retry_with(self, embed: Embed) -> bool:
        """Whether a failed build should start again with ``embed``: another engine's
        embedder at once (this one's was closed), the same one after ``RETRY_S``."""
        same = self._embed is not None and self._embed == embed
        return self.failed and (not same or time.monotonic() - self.failed_at > RETRY_S)

    @property
    def complete(self) -> bool:
        return len(self._chunks) == self._count()

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Ends the build after the chunk in progress (~0.5 s), which is saved: a process
        that exits soon after its first search still leaves a chunk to the next."""
        self._stop.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Whether the build thread ended (every chunk there, stopped, or failed)."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def vectors(self, words: Sequence[str]) -> dict[str, np.ndarray]:
        """The unit vectors of those of ``words`` whose chunk is ready."""
        out: dict[str, np.ndarray] = {}
        for word in words:
            row = self._rows.get(word)
            if row is None:
                continue
            chunk = self._chunks.get(row // self._chunk)
            if chunk is not None:
                out[word] = chunk[row % self._chunk]
        return out

    def _count(self) -> int:
        return -(-len(self._words) // self._chunk)

    def _fill(self) -> None:
        try:
            for index in range(self._count()):
                if self._stop.is_set():
                    return
                size = len(self._words[index * self._chunk : (index + 1) * self._chunk])
                saved = self._load(index, size)
                if saved is not None:
                    self._chunks[index] = saved
                elif self._build_missing:
                    self._chunks[index] = self._build(index)
            self._embed = None  # done: the table no longer keeps its embedder alive
            # (a table that only loads leaves missing chunks missing: their words are embedded
            # on demand by the searches that need them)
        except Exception as exc:  # an embedder closed or down: searches embed on demand
            self.failed_at = time.monotonic()
            self.failed = True
            if not self._stop.is_set():
                log.warning("word vectors of the common vocabulary not built: %s", exc)

    def _path(self, index: int) -> Path | None:
        return self._stem.with_name(f"{self._stem.name}.{index}.npy") if self._stem else None

    def _load(self, index: int, size: int) -> np.ndarray | None:
        path = self._path(index)
        if path is None or not path.exists():
            return None
        try:
            matrix: np.ndarray = np.load(path, allow_pickle=False)
        except Exception:  # empty (EOFError), truncated or not numpy: built again
            return None
        ok = matrix.dtype == np.float32 and matrix.ndim == 2 and matrix.shape[0] == size
        if not ok:
            return None
        matrix.setflags(write=False)  # shared by every tenant's searches
        return matrix

    def _build(self, index: int) -> np.ndarray:
        words = self._words[index * self._chunk : (index + 1) * self._chunk]
        parts = []
        for start in range(0, len(words), BATCH):
            embed = self._embed
            assert embed is not None  # released only once every chunk is there
            began = time.monotonic()
            parts.append(np.asarray(embed(words[start : start + BATCH]), np.float32))
            if activity.searching():
                self._stop.wait(YIELD * (time.monotonic() - began))
        matrix = np.ascontiguousarray(normalize(np.concatenate(parts)))
        matrix.setflags(write=False)  # shared by every tenant's searches
        path = self._path(index)
        if path is not None:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=".tmp")
                try:
                    with os.fdopen(fd, "wb") as handle:
                        np.save(handle, matrix, allow_pickle=False)
                        handle.flush()
                        os.fsync(handle.fileno())  # never an empty file after a crash
                    os.replace(tmp, path)
                finally:
                    if os.path.exists(tmp):
                        os.unlink(tmp)  # a full disk: no half-written file left behind
            except OSError as exc:  # a read-only data dir: this process keeps its table
                log.info("word vectors kept in memory only (%s)", exc)
        return matrix


_TABLES: dict[tuple[str, str, bool], Vocabulary] = {}
_TABLES_LOCK = threading.Lock()


def shared_vocabulary(
    embed: Embed, model: str, directory: Path | None, *, build: bool = True
) -> Vocabulary:
    """The process's table for ``model`` in ``directory``, started on first use; a table
    whose build failed is replaced by one using ``embed`` (``Vocabulary.retry_with``: not a
    new thread per search). ``build`` False: only the saved chunks are loaded."""
    key = (model, str(directory), build)
    with _TABLES_LOCK:
        table = _TABLES.get(key)
        if table is None or table.retry_with(embed):
            table = Vocabulary(embed, model, directory, common_words(), build=build)
            _TABLES[key] = table
            table.start()
        return table


@atexit.register
def _stop_all() -> None:
    # An embedder still running in a daemon thread while the interpreter shuts down can crash
    # it: stop between chunks and wait for the one being embedded.
    with _TABLES_LOCK:
        tables = list(_TABLES.values())
    for table in tables:
        table.stop()
    for table in tables:
        table.wait(5.0)
