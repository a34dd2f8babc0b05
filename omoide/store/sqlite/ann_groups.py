"""Rows that share one vector share one node of the graph (``ann.py``).

Why: real stores repeat vectors (the same message stored twice, "ok", "thanks"), and
bench/scale.py's corpus repeats each of 1,814 sentence vectors ~100 times. In an HNSW graph, a
hundred nodes at distance 0 fill each other's neighbour lists and become an island the search
rarely enters: at 722k such rows, recall@10 (equal scores counted) was 0.76. One node per
distinct vector (its float16 form: what the graph stores anyway) removes the islands, and a
query expands each node found to its rows, which the caller re-scores exactly from SQLite.

Which rows share a vector is decided by a 64-bit digest of the float16 bytes. A collision (two
different vectors, one digest) would only place a row under a slightly wrong vector in the
graph: its score is still its own float32 cosine, so results stay correct, only recall could
suffer, with a probability of ~n²/2⁶⁴.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np


def digests(vecs: np.ndarray) -> list[int]:
    """One digest per row of ``vecs`` (float32), of its float16 rounding."""
    half = np.ascontiguousarray(vecs, dtype=np.float32).astype(np.float16)
    return [
        int.from_bytes(hashlib.blake2b(row.tobytes(), digest_size=8).digest(), "little")
        for row in half
    ]


class Groups:
    """``key`` (a graph node) <-> the ``memory_seq`` rows whose vector it stands for."""

    def __init__(self) -> None:
        self.key_of: dict[int, int] = {}  # memory_seq -> key
        self.rows: dict[int, list[int]] = {}  # key -> memory_seqs
        self.by_digest: dict[int, int] = {}  # digest -> key
        self.digest_of: dict[int, int] = {}  # key -> digest
        self.next_key = 0

    def __len__(self) -> int:
        return len(self.key_of)

    def add(self, seq: int, digest: int) -> int | None:
        """File ``seq`` (not present) under its vector; the new key when the graph has no node
        for that vector yet (the caller adds it), else ``None``."""
        key = self.by_digest.get(digest)
        if key is not None:
            self.rows[key].append(seq)
            self.key_of[seq] = key
            return None
        key = self.next_key
        self.next_key += 1
        self.by_digest[digest] = key
        self.digest_of[key] = digest
        self.rows[key] = [seq]
        self.key_of[seq] = key
        return key

    def remove(self, seq: int) -> int | None:
        """Forget ``seq``; the key whose node the caller removes when it was the last row."""
        key = self.key_of.pop(seq, None)
        if key is None:
            return None
        members = self.rows[key]
        members.remove(seq)
        if members:
            return None
        del self.rows[key]
        del self.by_digest[self.digest_of.pop(key)]
        return key

    def expand(self, keys: list[int], k: int) -> list[int]:
        """The rows of the nodes ``keys`` (best first) until there are ``k``; a node's rows are
        kept whole (they tie) unless one node alone holds far more than asked."""
        out: list[int] = []
        cap = max(2 * k, k + 100)
        for key in keys:
            if len(out) >= k:
                break
            out.extend(self.rows.get(key, ())[: cap - len(out)])
        return out

    def save(self, path: Path) -> None:
        seqs = np.fromiter(self.key_of.keys(), dtype=np.int64, count=len(self.key_of))
        keys = np.fromiter(self.key_of.values(), dtype=np.int64, count=len(self.key_of))
        nodes = np.fromiter(self.digest_of.keys(), dtype=np.int64, count=len(self.digest_of))
        sums = np.fromiter(self.digest_of.values(), dtype=np.uint64, count=len(self.digest_of))
        with path.open("wb") as fh:  # np.savez would append ".npz" to a temporary name
            np.savez(fh, seqs=seqs, keys=keys, nodes=nodes, digests=sums, next=self.next_key)

    @classmethod
    def load(cls, path: Path) -> Groups:
        with np.load(path) as data:
            groups = cls()
            groups.key_of = dict(zip(data["seqs"].tolist(), data["keys"].tolist(), strict=True))
            groups.digest_of = dict(
                zip(data["nodes"].tolist(), data["digests"].tolist(), strict=True)
            )
            groups.next_key = int(data["next"])
        groups.by_digest = {d: k for k, d in groups.digest_of.items()}
        for seq, key in groups.key_of.items():
            groups.rows.setdefault(key, []).append(seq)
        if groups.rows.keys() != groups.digest_of.keys():
            raise ValueError("the groups file does not match itself")
        return groups
