"""The scale corpus: LoCoMo dev sentences remixed into as many memories as a scenario needs.

Each memory is ``<speaker>: <1-3 random sentences>`` (the 1,814 distinct sentences of four words
or more of the dev turns), 20 memories per session, two speakers per session drawn from 10
names, seeded. A memory's vector can be the normalised mean of its sentences' vectors
(``LookupEmbedder``), so 100k memories need 1,814 real embeddings, not 100k.
"""

from __future__ import annotations

import hashlib
import random
import re
import time
from typing import Any

from lib.common import BENCH_DIR, DEFAULT_DATA, load_locomo

NAMES = ["Caroline", "Melanie", "Jon", "Gina", "Maria", "John", "Audrey", "Andrew", "Evan", "Sam"]
SESSION_LEN = 20
CACHE = BENCH_DIR / "results" / ".cache"


def sentences(convs: list[Any] | None = None) -> list[str]:
    """The distinct sentences (four words or more, captions left out) of ``convs``, by default
    every LoCoMo dev conversation."""
    found: dict[str, None] = {}
    for conv in load_locomo(DEFAULT_DATA) if convs is None else convs:
        for turn in conv.turns:
            body = re.sub(r" \[image: .*\]$", "", turn.text.split(": ", 1)[1])
            for s in re.split(r"(?<=[.!?])\s+", body):
                if len(s.split()) >= 4:
                    found[s.strip()] = None
    return sorted(found)


def corpus(n: int, tenants: int, pool: int, seed: int = 42) -> list[tuple[int, int, str, tuple]]:
    """``(tenant, session, speaker, sentence ids)`` for ``n`` memories, tenant by tenant."""
    rng = random.Random(seed)
    per = n // tenants
    out = []
    for tenant in range(tenants):
        for i in range(per):
            session = i // SESSION_LEN
            if i % SESSION_LEN == 0:
                pair = rng.sample(NAMES, 2)
            count = rng.choice((1, 2, 2, 3))
            out.append((tenant, session, pair[i % 2], tuple(rng.sample(range(pool), count))))
    return out


def corpus_texts(n: int, tenants: int = 1) -> list[str]:
    """The texts of ``corpus(n, tenants, ...)`` over ``sentences()``, tenant by tenant."""
    pool = sentences()
    return [
        f"{speaker}: {' '.join(pool[i] for i in ids)}"
        for _, _, speaker, ids in corpus(n, tenants, len(pool))
    ]


def sentence_vectors(texts: list[str], embedder: Any) -> Any:
    import numpy as np

    key = hashlib.sha256("\n".join(texts).encode()).hexdigest()[:16]
    path = CACHE / f"sentences-{key}.npy"
    if path.exists():
        return np.load(path)
    start = time.perf_counter()
    vectors = embedder.embed(texts)
    print(f"  embedded {len(texts)} sentences in {time.perf_counter() - start:.0f} s", flush=True)
    CACHE.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return vectors


class LookupEmbedder:
    """Corpus texts get the normalised mean of their sentences' vectors (computed when asked,
    so the benchmark holds no 100k x 384 matrix of its own); anything else (queries) goes to
    the model."""

    def __init__(self, model: Any, ids_by_text: dict[str, tuple], sentence_vecs: Any) -> None:
        self.model = model
        self.name = model.name
        self.ids = ids_by_text
        self.sv = sentence_vecs

    def embed(self, texts: Any) -> Any:
        import numpy as np

        if not all(t in self.ids for t in texts):
            return self.model.embed(texts)
        vecs = np.stack([self.sv[list(self.ids[t])].mean(axis=0) for t in texts])
        return (vecs / np.linalg.norm(vecs, axis=1, keepdims=True)).astype(np.float32)


def questions(count: int) -> list[str]:
    qs = [q.question for c in load_locomo(DEFAULT_DATA) for q in c.questions]
    return [qs[i % len(qs)] for i in range(count)]
