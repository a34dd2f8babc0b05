"""An exact in-process vector index that is a derived cache of the ``memory_vectors`` table.

Why not sqlite-vec: this CPython's ``sqlite3`` cannot load extensions, and sqlite-vec's brute
force is ~7x slower than numpy (39 ms vs 5 ms at 100k x 384). Why not HNSW: at our sizes an exact
scan meets the latency targets and never loses recall. SQLite stays the source of truth: every
vector change appends to ``vec_log`` (by trigger, in the writer's transaction), and before each
search the cache replays the log entries it has not seen, so a row acknowledged by any process
is found and a deleted one is never served. Tenants are loaded lazily, one matrix each.
"""

from __future__ import annotations

import sqlite3
import threading

import numpy as np

from omoide.errors import InvalidInput

_LOG_KEEP = 100_000


class _TenantMatrix:
    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.n = 0
        self.seqs = np.zeros(64, dtype=np.int64)
        self.mat = np.zeros((64, dim), dtype=np.float32)
        self.pos: dict[int, int] = {}

    def load(self, seqs: np.ndarray, mat: np.ndarray) -> None:
        """Fill an empty matrix in one step (a cold tenant of 100k rows: 0.36 s, not 1 s)."""
        self.n = len(seqs)
        capacity = max(64, self.n * 2)
        self.seqs = np.zeros(capacity, dtype=np.int64)
        self.seqs[: self.n] = seqs
        self.mat = np.zeros((capacity, self.dim), dtype=np.float32)
        self.mat[: self.n] = mat
        self.pos = {int(s): i for i, s in enumerate(seqs)}

    def put(self, seq: int, vec: np.ndarray) -> None:
        if vec.shape[0] != self.dim:
            return  # a stale vector of another model; reindex replaces it
        idx = self.pos.get(seq)
        if idx is None:
            if self.n == len(self.seqs):
                self.seqs = np.resize(self.seqs, self.n * 2)
                grown = np.zeros((self.n * 2, self.dim), dtype=np.float32)
                grown[: self.n] = self.mat[: self.n]
                self.mat = grown
            idx = self.n
            self.n += 1
            self.pos[seq] = idx
            self.seqs[idx] = seq
        self.mat[idx] = vec

    def remove(self, seq: int) -> None:
        idx = self.pos.pop(seq, None)
        if idx is None:
            return
        last = self.n - 1
        if idx != last:
            moved = int(self.seqs[last])
            self.seqs[idx] = moved
            self.mat[idx] = self.mat[last]
            self.pos[moved] = idx
        self.n = last

    def scores(self, query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self.seqs[: self.n], self.mat[: self.n] @ query


class VectorCache:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tenants: dict[str, _TenantMatrix] = {}
        self._log_seq = 0

    def top_k(
        self, conn: sqlite3.Connection, tenant: str, query: np.ndarray, k: int
    ) -> tuple[list[tuple[int, float]], int]:
        """The ``k`` rows of ``tenant`` most similar to ``query`` (cosine on unit vectors),
        and how many rows the tenant has."""
        with self._lock:
            matrix = self._matrix(conn, tenant)
            if matrix is None or matrix.n == 0:
                return [], 0
            if query.shape != (matrix.dim,):
                raise InvalidInput(
                    f"query vector has shape {query.shape}; stored vectors have {matrix.dim}"
                    " dimensions (reindex after changing the embedder)"
                )
            seqs, scores = matrix.scores(query.astype(np.float32, copy=False))
            part = np.argpartition(-scores, k)[:k] if k < len(scores) else np.arange(len(scores))
            order = part[np.argsort(-scores[part], kind="stable")]
            return [(int(seqs[i]), float(scores[i])) for i in order], matrix.n

    def count(self, conn: sqlite3.Connection, tenant: str) -> int:
        """How many vectors ``tenant`` has, as the next search would see them."""
        with self._lock:
            matrix = self._matrix(conn, tenant)
            return 0 if matrix is None else matrix.n

    def reset(self) -> None:
        with self._lock:
            self._tenants.clear()
            self._log_seq = 0

    def _matrix(self, conn: sqlite3.Connection, tenant: str) -> _TenantMatrix | None:
        conn.execute("BEGIN")  # one snapshot for the log and the rows it points to
        try:
            self._replay(conn)
            if tenant not in self._tenants:
                self._load(conn, tenant)
        finally:
            conn.execute("COMMIT")
        return self._tenants.get(tenant)

    def _replay(self, conn: sqlite3.Connection) -> None:
        # Two statements: SQLite answers a lone min() or max() from the index, both by a scan.
        high = conn.execute("SELECT max(seq) FROM vec_log").fetchone()[0]
        if high is None or high <= self._log_seq:
            return
        low = conn.execute("SELECT min(seq) FROM vec_log").fetchone()[0]
        if low is not None and low > self._log_seq + 1 and self._log_seq:
            self._tenants.clear()  # the log was trimmed past what we saw: reload lazily
        if not self._tenants:
            self._log_seq = high
            return
        last_op: dict[tuple[str, int], int] = {}
        rows = conn.execute(
            "SELECT tenant, memory_seq, op FROM vec_log WHERE seq > ? ORDER BY seq",
            (self._log_seq,),
        )
        for tenant, seq, op in rows:
            if tenant in self._tenants:
                last_op[(tenant, seq)] = op
        puts = [seq for (_, seq), op in last_op.items() if op == 1]
        vectors = dict(self._fetch(conn, puts))
        for (tenant, seq), op in last_op.items():
            matrix = self._tenants[tenant]
            vec = vectors.get(seq)
            if op == 1 and vec is not None:
                matrix.put(seq, vec)
            else:
                matrix.remove(seq)
        self._log_seq = high

    def _load(self, conn: sqlite3.Connection, tenant: str) -> None:
        rows = conn.execute(
            "SELECT memory_seq, vec FROM memory_vectors WHERE tenant = ?", (tenant,)
        ).fetchall()
        if not rows:
            return
        dim = len(rows[0][1]) // 4
        rows = [r for r in rows if len(r[1]) == dim * 4]  # stale rows of another model
        matrix = _TenantMatrix(dim)
        matrix.load(
            np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows)),
            np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(-1, dim),
        )
        self._tenants[tenant] = matrix

    @staticmethod
    def _fetch(conn: sqlite3.Connection, seqs: list[int]) -> list[tuple[int, np.ndarray]]:
        out: list[tuple[int, np.ndarray]] = []
        for start in range(0, len(seqs), 500):
            chunk = seqs[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = conn.execute(
                f"SELECT memory_seq, vec FROM memory_vectors WHERE memory_seq IN ({marks})", chunk
            )
            out.extend((int(s), np.frombuffer(b, dtype=np.float32)) for s, b in rows)
        return out


def trim_log(conn: sqlite3.Connection) -> None:
    """Keep ``vec_log`` bounded; caches that fell behind the trimmed part reload."""
    conn.execute(
        "DELETE FROM vec_log WHERE seq <= (SELECT max(seq) FROM vec_log) - ?", (_LOG_KEEP,)
    )
