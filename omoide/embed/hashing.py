"""A deterministic bag-of-words embedder: no model, no download, instant.

For tests that need many processes (crash tests) and for machines without torch. Texts sharing
words get similar vectors; it knows nothing of meaning. Never the default.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

from omoide.embed.protocol import normalize

_WORD = re.compile(r"\w+", re.UNICODE)


class HashEmbedder:
    def __init__(self, dim: int = 256) -> None:
        self.dim = dim
        self.name = f"hash/{dim}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
                value = int.from_bytes(digest, "little")
                out[row, value % self.dim] += 1.0 if (value >> 32) & 1 else -1.0
        return normalize(out)
