"""The in-process vector index, a derived cache of the ``memory_vectors`` table.

Why not sqlite-vec: this CPython's ``sqlite3`` cannot load extensions, and sqlite-vec's brute
force is ~7x slower than numpy (39 ms vs 5 ms at 100k x 384). Below ``ann.THRESHOLD`` vectors
a tenant is scanned exactly; larger tenants get an HNSW graph (``ann.py``), a cache persisted
beside the file. SQLite stays the source of truth: every
vector change appends to ``vec_log`` (by trigger, in the writer's transaction), and before each
search the cache replays the log entries it has not seen, so a row acknowledged by any process
is found and a deleted one is never served. Tenants are loaded lazily, one matrix (or graph)
each.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

from omoide.errors import InvalidInput
from omoide.store.sqlite import ann
from omoide.store.sqlite.db import snapshot

_LOG_KEEP = 100_000
# Tenants from which the exact scan holds float16 while their graph is built (minutes at 1M
# rows): at 1M, peak RSS 2.3 GB instead of 3.0 (float32 matrix and growing graph together).
# numpy has no fast float16 product (11x its float32 one at 1M rows here), so those scans run
# through usearch's SIMD brute force: 125-165 ms at 1M rows against 55 for numpy's float32.
# Below this size the float32 matrix is small and the scan fast: it stays.
HALF_FROM = 200_000
# A float16 score (row and query rounded, each component by at most 2**-11 of itself) is within
# ~2**-10 of the float32 one for unit vectors, so every row of the exact top k scores, in
# float16, at least the k-th best float16 score minus twice that; 0.004 leaves room for the
# sums' own rounding. Those rows are re-scored from their float32 rows.
HALF_MARGIN = 0.004
_HALF_POOL_MAX = 2_000  # rows re-scored beyond k at most (many equal vectors at the k-th score)


class _TenantMatrix:
    """A tenant's vectors for the exact scan. ``half``: float16, for a large tenant whose graph
    is being built (``HALF_FROM``), its answers re-scored from the float32 rows (``top_k``)."""

    def __init__(self, dim: int, *, half: bool = False) -> None:
        self.dim = dim
        self.n = 0
        self.half = half
        self.seqs = np.zeros(64, dtype=np.int64)
        self.mat = np.zeros((64, dim), dtype=self.dtype)
        self.pos: dict[int, int] = {}

    @property
    def dtype(self) -> type[np.floating[Any]]:
        return np.float16 if self.half else np.float32

    def load(self, conn: sqlite3.Connection, tenant: str, count: int) -> None:
        """Fill an empty matrix in chunks straight from the rows (no full copy of them)."""
        # room to grow; a half matrix is replaced by the graph soon, so it gets less
        capacity = max(64, count + (count // 64 if self.half else count // 8))
        self.seqs = np.zeros(capacity, dtype=np.int64)
        self.mat = np.zeros((capacity, self.dim), dtype=self.dtype)
        cursor = conn.execute(
            "SELECT memory_seq, vec FROM memory_vectors WHERE tenant = ?", (tenant,)
        )
        while chunk := cursor.fetchmany(20_000):
            rows = [r for r in chunk if len(r[1]) == self.dim * 4]  # else another model's
            seqs = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            mat = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
            self._append(seqs, mat.reshape(-1, self.dim))

    def _append(self, seqs: np.ndarray, mat: np.ndarray) -> None:
        end = self.n + len(seqs)
        if end > len(self.seqs):
            self._grow(end * 2)
        self.seqs[self.n : end] = seqs
        self.mat[self.n : end] = mat
        self.pos.update((int(q), self.n + i) for i, q in enumerate(seqs))
        self.n = end

    def put(self, seq: int, vec: np.ndarray) -> None:
        if vec.shape[0] != self.dim:
            return  # a stale vector of another model; reindex replaces it
        idx = self.pos.get(seq)
        if idx is None:
            if self.n == len(self.seqs):
                self._grow(max(64, self.n * 2))
            idx = self.n
            self.n += 1
            self.pos[seq] = idx
            self.seqs[idx] = seq
        self.mat[idx] = vec

    def _grow(self, capacity: int) -> None:
        self.seqs = np.resize(self.seqs, capacity)
        grown = np.zeros((capacity, self.dim), dtype=self.dtype)
        grown[: self.n] = self.mat[: self.n]
        self.mat = grown

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

    def near_best(self, query: np.ndarray, k: int, margin: float) -> np.ndarray:
        """The ``memory_seq`` of every row whose float16 score is within ``margin`` of the k-th
        best float16 score (capped at ``k + _HALF_POOL_MAX`` rows)."""
        want = min(self.n, k + 64)
        while True:
            positions, scores = ann.exact_search(self.mat[: self.n], query, want)
            boundary = scores[min(k, len(scores)) - 1] - margin
            if want >= min(self.n, k + _HALF_POOL_MAX) or scores[-1] < boundary:
                return np.asarray(self.seqs[positions[scores >= boundary]], dtype=np.int64)
            want = min(self.n, k + _HALF_POOL_MAX, want * 4)


_Tenant = _TenantMatrix | ann.AnnTenant


class VectorCache:
    """``path``: the database file (the graphs are cached beside it); ``threshold``: vectors
    from which a tenant is searched through a graph (``None``: never; never without usearch
    either); ``ef``: candidates a graph explores per query; ``reader``: this thread's read
    connection, for the builds in a thread (without it, builds wait)."""

    def __init__(
        self,
        path: Path | None = None,
        threshold: int | None = ann.THRESHOLD,
        reader: Callable[[], sqlite3.Connection] | None = None,
        ef: int = ann.EF_SEARCH,
    ) -> None:
        self._lock = threading.Lock()
        self._tenants: dict[str, _Tenant] = {}
        # Graphs of more than ann.SYNC_BUILD rows are built by a thread on its own ``reader``
        # connection while the exact scan answers (a build takes minutes at 1M rows).
        self._reader = reader
        self._builds: dict[str, _Build] = {}
        self._stopped: list[_Build] = []
        self._log_seq = 0
        self._files = ann.AnnFiles(path)
        self._threshold = threshold if threshold is not None else 0
        self._ann = threshold is not None and ann.available()
        self._ef = ef

    def top_k(
        self, conn: sqlite3.Connection, tenant: str, query: np.ndarray, k: int
    ) -> tuple[list[tuple[int, float]], int, bool]:
        """The ``k`` rows of ``tenant`` most similar to ``query`` (cosine on unit vectors), how
        many rows the tenant has, and whether the rows came from a graph (approximate)."""
        with self._lock:
            matrix = self._matrix(conn, tenant)
            if matrix is None or matrix.n == 0:
                return [], 0, False
            if query.shape != (matrix.dim,):
                raise InvalidInput(
                    f"query vector has shape {query.shape}; stored vectors have {matrix.dim}"
                    " dimensions (reindex after changing the embedder)"
                )
            query = query.astype(np.float32, copy=False)
            if isinstance(matrix, ann.AnnTenant):
                found = self._fetch(conn, matrix.candidates(query, k))
                scored = [(seq, float(vec @ query)) for seq, vec in found]
                return sorted(scored, key=lambda x: -x[1])[:k], matrix.n, True
            if matrix.half:
                return self._rescored(conn, matrix, query, k), matrix.n, False
            seqs, scores = matrix.scores(query)
            part = np.argpartition(-scores, k)[:k] if k < len(scores) else np.arange(len(scores))
            order = part[np.argsort(-scores[part], kind="stable")]
            return [(int(seqs[i]), float(scores[i])) for i in order], matrix.n, False

    def _rescored(
        self, conn: sqlite3.Connection, matrix: _TenantMatrix, query: np.ndarray, k: int
    ) -> list[tuple[int, float]]:
        """The exact top ``k`` of a float16 matrix: every row within ``HALF_MARGIN`` of its k-th
        best, re-scored from the float32 rows, best first."""
        margin = HALF_MARGIN * float(np.linalg.norm(query))
        pool = matrix.near_best(query, k, margin).tolist()
        # read after the snapshot: a row deleted meanwhile is gone, one of another model skipped
        found = {seq: vec for seq, vec in self._fetch(conn, pool) if len(vec) == len(query)}
        scored = [(seq, float(found[seq] @ query)) for seq in pool if seq in found]
        scored.sort(key=lambda hit: -hit[1])
        return scored[:k]

    def count(self, conn: sqlite3.Connection, tenant: str) -> int:
        """How many vectors ``tenant`` has, as the next search would see them."""
        with self._lock:
            matrix = self._matrix(conn, tenant)
            return 0 if matrix is None else matrix.n

    def wait_for_builds(self, timeout: float | None = None) -> bool:
        """Wait until no graph is being built (benchmarks, tests); whether none is left. The
        next search of a tenant whose build ended switches it to the graph."""
        with self._lock:
            jobs = list(self._builds.values())
        for job in jobs:
            job.thread.join(timeout)
        return not any(job.thread.is_alive() for job in jobs)

    def reset(self) -> None:
        with self._lock:
            self._tenants.clear()
            self._log_seq = 0
            for job in self._builds.values():
                job.stop.set()
            self._stopped += self._builds.values()  # joined by close()
            self._builds.clear()

    def close(self) -> None:
        """Stop the builds; write the graphs changed since their file was written (a later
        start replays less)."""
        with self._lock:
            jobs = [*self._builds.values(), *self._stopped]
            self._builds.clear()
            self._stopped.clear()
        for job in jobs:
            job.stop.set()
            job.thread.join()  # it reads through the store's connections, closed next
        with self._lock:
            for tenant, matrix in self._tenants.items():
                if isinstance(matrix, ann.AnnTenant) and matrix.dirty:
                    self._files.save(tenant, matrix, self._log_seq)

    def _matrix(self, conn: sqlite3.Connection, tenant: str) -> _Tenant | None:
        conn.execute("BEGIN")  # one snapshot for the log and the rows it points to
        try:
            self._replay(conn)
            if tenant not in self._tenants:
                self._load(conn, tenant)
            self._resize(conn, tenant)
        finally:
            conn.execute("COMMIT")
        return self._tenants.get(tenant)

    def _resize(self, conn: sqlite3.Connection, tenant: str) -> None:
        """A tenant that grew past the threshold gets a graph (at once, or when its build
        ends); one that shrank well below it goes back to the exact scan; a graph changed a
        lot since its file is written again."""
        matrix = self._tenants.get(tenant)
        if isinstance(matrix, _TenantMatrix) and self._ann and matrix.n >= self._threshold:
            del self._tenants[tenant]  # _graph's log replay must not touch the matrix
            self._tenants[tenant] = self._graph(conn, tenant, matrix.dim, matrix.n) or matrix
        elif isinstance(matrix, ann.AnnTenant):
            if matrix.n < self._threshold // 2:
                del self._tenants[tenant]
                self._load(conn, tenant)
            elif matrix.dirty >= max(1_000, matrix.n // 20):
                self._files.save(tenant, matrix, self._log_seq)

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
        rows = conn.execute(
            "SELECT tenant, memory_seq, op FROM vec_log WHERE seq > ? ORDER BY seq",
            (self._log_seq,),
        )
        self._apply(conn, rows)
        self._log_seq = high

    def _apply(self, conn: sqlite3.Connection, rows: Iterable[tuple[str, int, int]]) -> None:
        last_op: dict[tuple[str, int], int] = {}
        for tenant, seq, op in rows:
            if tenant in self._tenants:
                last_op[(tenant, seq)] = op
        ops = list(last_op.items())
        for start in range(0, len(ops), 20_000):  # bounded memory for a long catch-up
            chunk = ops[start : start + 20_000]
            vectors = dict(self._fetch(conn, [seq for (_, seq), op in chunk if op == 1]))
            added: dict[str, list[tuple[int, np.ndarray]]] = {}
            for (tenant, seq), op in chunk:
                matrix = self._tenants[tenant]
                vec = vectors.get(seq)
                if op == 1 and vec is not None and isinstance(matrix, ann.AnnTenant):
                    added.setdefault(tenant, []).append((seq, vec))
                elif op == 1 and vec is not None:
                    matrix.put(seq, vec)
                else:
                    matrix.remove(seq)
            for tenant, pairs in added.items():  # one multi-threaded insert per graph
                graph = self._tenants[tenant]
                assert isinstance(graph, ann.AnnTenant)
                graph.put_many(pairs)

    def _load(self, conn: sqlite3.Connection, tenant: str) -> None:
        first = conn.execute(
            "SELECT vec FROM memory_vectors WHERE tenant = ? LIMIT 1", (tenant,)
        ).fetchone()
        if first is None:
            return
        dim = len(first[0]) // 4
        count = conn.execute(
            "SELECT count(*) FROM memory_vectors WHERE tenant = ?", (tenant,)
        ).fetchone()[0]
        if self._ann and count >= self._threshold:
            graph = self._graph(conn, tenant, dim, count)
            if graph is not None:
                self._tenants[tenant] = graph
                return
        # a large tenant's graph on its way: float16 meanwhile
        half = tenant in self._builds and count >= HALF_FROM
        matrix = _TenantMatrix(dim, half=half)  # meanwhile (or for good)
        matrix.load(conn, tenant, count)
        self._tenants[tenant] = matrix

    def _graph(
        self, conn: sqlite3.Connection, tenant: str, dim: int, count: int
    ) -> ann.AnnTenant | None:
        graph = self._find_graph(conn, tenant, dim, count)
        if graph is not None:
            graph.ef = self._ef
        return graph

    def _find_graph(
        self, conn: sqlite3.Connection, tenant: str, dim: int, count: int
    ) -> ann.AnnTenant | None:
        """The tenant's graph: its file if it passes every check after catching up, or a
        build that ended; else built now if small, else ``None`` while a thread builds it."""
        job = self._builds.get(tenant)
        if job is not None:
            if job.thread.is_alive():
                return None
            del self._builds[tenant]
            if job.result is not None:
                graph = self._checked(conn, tenant, dim, *job.result)
                if graph is not None:
                    return graph
        else:
            loaded = self._files.load(tenant)
            graph = None if loaded is None else self._checked(conn, tenant, dim, *loaded)
            if graph is not None:
                return graph
        if self._reader is None or count < ann.SYNC_BUILD:
            graph = ann.build(conn, tenant, dim)
            self._files.save(tenant, graph, self._log_seq)
            return graph
        job = _Build(self._build_in_thread, tenant, dim)
        self._builds[tenant] = job
        job.thread.start()
        return None

    def _checked(
        self, conn: sqlite3.Connection, tenant: str, dim: int, graph: ann.AnnTenant, seq: int
    ) -> ann.AnnTenant | None:
        """``graph`` (of the state at ``vec_log`` ``seq``) caught up, if it then matches."""
        count = conn.execute(  # the rows of this dimension (stale rows of another model aside)
            "SELECT count(*) FROM memory_vectors WHERE tenant = ? AND length(vec) = ?",
            (tenant, dim * 4),
        ).fetchone()[0]
        self._tenants[tenant] = graph  # _apply only touches loaded tenants
        try:
            caught_up = graph.dim == dim and self._catch_up(conn, tenant, seq)
            if caught_up and ann.consistent(conn, tenant, graph, count):
                return graph
        finally:
            del self._tenants[tenant]
        ann.log.warning("vector index cache of a tenant is out of step: rebuilding")
        return None

    def _build_in_thread(self, job: _Build, tenant: str, dim: int) -> None:
        assert self._reader is not None
        try:
            conn = self._reader()
            with snapshot(conn):
                high = conn.execute("SELECT coalesce(max(seq), 0) FROM vec_log").fetchone()[0]
                graph = ann.build(conn, tenant, dim, job.stop.is_set)
            if not job.stop.is_set():
                self._files.save(tenant, graph, high)
                job.result = (graph, high)
        except Exception:  # a cache: the exact scan goes on; the next search tries again
            ann.log.exception("building the vector index of a tenant failed")

    def _catch_up(self, conn: sqlite3.Connection, tenant: str, since: int) -> bool:
        """Replay ``tenant``'s log entries after ``since`` (up to what this cache has seen);
        ``False`` when that is impossible (a file of another state, or a trimmed log)."""
        high = self._log_seq
        if since > high:
            return False
        if since == high:
            return True
        low = conn.execute("SELECT min(seq) FROM vec_log").fetchone()[0]
        if low is None or low > since + 1:
            return False
        rows = conn.execute(
            "SELECT tenant, memory_seq, op FROM vec_log WHERE seq > ? AND seq <= ?"
            " AND tenant = ? ORDER BY seq",
            (since, high, tenant),
        )
        self._apply(conn, rows)
        return True

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


class _Build:
    """A graph built by a thread from one snapshot; ``result``: it and its ``vec_log`` seq."""

    def __init__(self, run: Callable[[_Build, str, int], None], tenant: str, dim: int) -> None:
        self.stop = threading.Event()
        self.result: tuple[ann.AnnTenant, int] | None = None
        self.thread = threading.Thread(
            target=run, args=(self, tenant, dim), name="omoide-ann-build", daemon=True
        )


def trim_log(conn: sqlite3.Connection) -> None:
    """Keep ``vec_log`` bounded; caches that fell behind the trimmed part reload."""
    conn.execute(
        "DELETE FROM vec_log WHERE seq <= (SELECT max(seq) FROM vec_log) - ?", (_LOG_KEEP,)
    )
