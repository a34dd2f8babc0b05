"""An approximate (HNSW, usearch) index of one large tenant, a rebuildable cache beside the file.

Why: an exact scan of 1M x 384 floats is ~45 ms of memory bandwidth per query and holds 1.5 GB
(plus copies while loading); the graph answers in a few ms from float16 vectors. Tenants below
``THRESHOLD`` vectors stay exact (``vectors._TenantMatrix``): there the scan is fast and never
misses. SQLite stays the source of truth. The graph has one node per distinct vector
(``ann_groups``: repeated vectors made islands the search missed); every row of the nodes found
is re-scored from its float32 row in ``memory_vectors`` (so scores equal the exact ones and a
row deleted meanwhile is dropped), and the caller falls back to an exact scan of the filtered
rows when filters are selective.

On disk: ``<db>.ann/<tenant digest>.json`` names the index file and the rows file (which rows
each node stands for), their sizes and CRC-32s, the dimension and the ``vec_log`` sequence they
reflect. Loading checks all of that, replays the tenant's log entries written since (by any
process), then compares the row count and a sample of vectors with SQLite; any mismatch, a
trimmed log or a damaged file means a rebuild (by a thread above ``SYNC_BUILD`` rows).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import logging
import os
import sqlite3
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from omoide.config import ANN_EF, ANN_THRESHOLD
from omoide.store.sqlite.ann_groups import Groups, digests

log = logging.getLogger(__name__)

# Vectors in a tenant from which it gets a graph when usearch is installed (the `ann` extra); the
# store's ``ann_threshold`` (OMOIDE_ANN_THRESHOLD: a number, or `off`) overrides it. Below it the
# exact scan is fast and never misses. At 100k rows the graph makes the vector search faster and
# the process smaller (the graph's float16 vectors instead of the float32 matrix), built in a
# thread; figures in bench/README.md ("Approximate vector index") and docs/performance.md.
THRESHOLD: int | None = ANN_THRESHOLD
# Candidates the graph explores per query (the store's ``ann_ef``, OMOIDE_ANN_EF): recall against
# exact search for each value, with and without one node per distinct vector (ann_groups), is in
# bench/README.md ("Approximate vector index").
EF_SEARCH = ANN_EF
# Above this many rows a graph is built by a thread while the exact scan answers (below it the
# build takes seconds; build times in bench/README.md).
SYNC_BUILD = 50_000
MAX_FETCH = 1_000  # beyond this many candidates an exact scan of the filtered rows is cheaper
CONNECTIVITY = 16
# Candidates kept while a node is linked in. 64 made graphs a tenant's small clusters are hard
# to reach in: docs/decisions/0002's tenants (a conversation's ~400 turns among 100k other
# memories), recall@10 against exact 0.905 / 0.945 (f16 / f32) at 64, 0.969 at 128, 0.985-0.998
# at 192, 0.986-0.998 at 256, for ~4x the build time of 64 (8 -> 29-37 s at 72k distinct
# vectors; bench/README.md, "The graph from 50,000 vectors").
EF_ADD = 256
_FORMAT = 3  # bump when the file layout or the index parameters change
_SAMPLE = 16  # vectors compared with SQLite after a load
_CHUNK = 20_000


def available() -> bool:
    """Whether usearch is installed (found, not imported: see ``_usearch``)."""
    return importlib.util.find_spec("usearch") is not None


def _usearch() -> Any:
    # usearch 2.26's extension loaded before onnxruntime's makes `import onnxruntime` segfault
    # (libstdc++, measured here); the other order is fine, so onnxruntime, when installed,
    # is loaded first.
    with contextlib.suppress(ImportError):
        import onnxruntime  # noqa: F401
    from usearch.index import Index

    return Index


class AnnTenant:
    """One tenant's graph: a node per distinct vector (``ann_groups``), each standing for the
    ``memory_seq`` rows that hold it."""

    def __init__(
        self, index: Any, dim: int, groups: Groups | None = None, ef: int = EF_SEARCH
    ) -> None:
        self.index = index
        self.dim = dim
        self.groups = Groups() if groups is None else groups
        self.dirty = 0  # changes since the file was written
        self.ef = ef  # candidates explored per query (the store's ``ann_ef``)

    @property
    def n(self) -> int:
        """Rows (not nodes)."""
        return len(self.groups)

    def put(self, seq: int, vec: np.ndarray) -> None:
        self.put_many([(seq, vec)])

    def put_many(self, pairs: list[tuple[int, np.ndarray]]) -> None:
        latest = {seq: vec for seq, vec in pairs if vec.shape[0] == self.dim}
        pairs = list(latest.items())
        if not pairs:
            return  # stale vectors of another model; reindex replaces them
        for seq, _ in pairs:
            self.remove(seq)  # a changed vector may belong to another node now
        vecs = np.stack([vec for _, vec in pairs]).astype(np.float32, copy=False)
        self.add_new(np.fromiter((s for s, _ in pairs), dtype=np.int64, count=len(pairs)), vecs)
        self.dirty += len(pairs)

    def add_new(self, seqs: np.ndarray, vecs: np.ndarray) -> None:
        """File rows not present yet; one multi-threaded insert of the vectors new to the graph."""
        fresh: list[int] = []
        rows: list[int] = []
        for i, (seq, digest) in enumerate(zip(seqs.tolist(), digests(vecs), strict=True)):
            key = self.groups.add(seq, digest)
            if key is not None:
                fresh.append(key)
                rows.append(i)
        if fresh:
            keys = np.asarray(fresh, dtype=np.uint64)
            # Threads insert in an order the scheduler picks, so a graph built by several is a
            # different graph each time (measured on tests/store/test_ann.py's 3,000 rows:
            # recall 0.994-1.0 idle, 0.973 on a loaded machine; one thread: 1.0 every time).
            # Below SYNC_BUILD rows one thread takes milliseconds and gives the same graph, so
            # the same answers, in every process; only large builds use every core.
            threads = (os.cpu_count() or 1) if len(fresh) >= SYNC_BUILD else 1
            self.index.add(keys, vecs[rows], threads=threads)

    def remove(self, seq: int) -> None:
        if seq not in self.groups.key_of:
            return
        key = self.groups.remove(seq)
        if key is not None:
            self.index.remove(key)
        self.dirty += 1

    def vector(self, seq: int) -> np.ndarray | None:
        """The graph's (float16) vector of row ``seq``."""
        key = self.groups.key_of.get(seq)
        return None if key is None else np.asarray(self.index.get(key), dtype=np.float32).ravel()

    def candidates(self, query: np.ndarray, k: int) -> list[int]:
        """About ``k`` rows nearest to ``query``: the rows of the nearest nodes."""
        self.index.expansion_search = max(self.ef, k)
        found = self.index.search(query, min(k, len(self.index)))
        return self.groups.expand([int(key) for key in found.keys], k)


def exact_search(rows: np.ndarray, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Positions and inner products of the ``k`` rows nearest to ``query``, best first, by
    usearch's SIMD brute force in the rows' own type (numpy multiplies float16 slowly)."""
    _usearch()  # loads onnxruntime first (see there)
    from usearch.index import search

    found = search(rows, query.astype(rows.dtype), k, "ip", exact=True, threads=1)
    keys = np.asarray(found.keys, dtype=np.int64).ravel()[:k]
    scores = 1.0 - np.asarray(found.distances, dtype=np.float32).ravel()[:k]
    return keys, scores


def new_index(dim: int) -> Any:
    return _usearch()(
        ndim=dim,
        metric="ip",  # rows are unit vectors: inner product is the cosine
        dtype="f16",
        connectivity=CONNECTIVITY,
        expansion_add=EF_ADD,
        expansion_search=EF_SEARCH,
    )


def build(
    conn: sqlite3.Connection, tenant: str, dim: int, stop: Callable[[], bool] = lambda: False
) -> AnnTenant:
    """A graph of every ``dim``-sized vector of ``tenant``, read in chunks (no full copy);
    partial when ``stop()`` turned true."""
    ann = AnnTenant(new_index(dim), dim)
    cursor = conn.execute("SELECT memory_seq, vec FROM memory_vectors WHERE tenant = ?", (tenant,))
    while not stop() and (chunk := cursor.fetchmany(_CHUNK)):
        chunk = [r for r in chunk if len(r[1]) == dim * 4]
        if not chunk:
            continue
        seqs = np.fromiter((r[0] for r in chunk), dtype=np.int64, count=len(chunk))
        vecs = np.frombuffer(b"".join(r[1] for r in chunk), dtype=np.float32)
        ann.add_new(seqs, vecs.reshape(-1, dim))
    return ann


class AnnFiles:
    """The graphs' files beside the database; ``None`` for an in-memory database."""

    def __init__(self, db_path: Path | None) -> None:
        self.dir = None if db_path is None else db_path.with_name(db_path.name + ".ann")

    def _meta_path(self, tenant: str) -> Path:
        assert self.dir is not None
        digest = hashlib.blake2b(tenant.encode(), digest_size=12).hexdigest()
        return self.dir / f"{digest}.json"

    def save(self, tenant: str, ann: AnnTenant, log_seq: int) -> None:
        """Write the graph, its rows and then its description, each by rename (readers never
        see half a file, and the description only names complete ones)."""
        if self.dir is None:
            return
        try:
            self.dir.mkdir(mode=0o700, exist_ok=True)
            meta_path = self._meta_path(tenant)
            old = _read_json(meta_path) or {}
            stem = f"{meta_path.stem}.{os.urandom(6).hex()}"
            graph = self._write(f"{stem}.usearch", lambda tmp: ann.index.save(str(tmp)))
            groups = self._write(f"{stem}.groups", ann.groups.save)
            meta = {
                "format": _FORMAT,
                "tenant": tenant,
                **_describe("", graph),
                **_describe("groups_", groups),
                "dim": ann.dim,
                "nodes": len(ann.index),
                "count": ann.n,
                "log_seq": log_seq,
            }
            tmp_meta = meta_path.with_suffix(".json.tmp" + os.urandom(4).hex())
            tmp_meta.write_text(json.dumps(meta))
            os.chmod(tmp_meta, 0o600)  # it names the tenant
            os.replace(tmp_meta, meta_path)
            ann.dirty = 0
            for key in ("file", "groups_file"):
                if old.get(key) not in (None, meta[key]):
                    with contextlib.suppress(OSError):
                        (self.dir / str(old[key])).unlink()
        except OSError as exc:  # a cache: searching goes on without the file
            log.warning("cannot write the vector index cache in %s: %s", self.dir, exc)

    def _write(self, name: str, write: Callable[[Path], None]) -> Path:
        assert self.dir is not None
        tmp = self.dir / (name + ".tmp")
        write(tmp)
        os.chmod(tmp, 0o600)
        os.replace(tmp, self.dir / name)
        return self.dir / name

    def load(self, tenant: str) -> tuple[AnnTenant, int] | None:
        """The saved graph and the ``vec_log`` sequence it reflects, or ``None`` if there is
        none or it fails a check (size, CRC, format, tenant, counts)."""
        if self.dir is None:
            return None
        meta = _read_json(self._meta_path(tenant))
        if not meta or meta.get("format") != _FORMAT or meta.get("tenant") != tenant:
            return None
        path = self.dir / str(meta.get("file", ""))
        groups_path = self.dir / str(meta.get("groups_file", ""))
        try:
            if not (_intact(path, meta, "") and _intact(groups_path, meta, "groups_")):
                log.warning("vector index cache %s is damaged: rebuilding", path)
                return None
            index = new_index(int(meta["dim"]))
            index.load(str(path))
            groups = Groups.load(groups_path)
        except (OSError, KeyError, ValueError, RuntimeError) as exc:
            log.warning("cannot read the vector index cache %s: %s", path, exc)
            return None
        nodes_ok = len(index) == meta["nodes"] == len(groups.rows)
        if index.ndim != meta["dim"] or not nodes_ok or len(groups) != meta["count"]:
            return None
        return AnnTenant(index, int(meta["dim"]), groups), int(meta["log_seq"])


def _describe(prefix: str, path: Path) -> dict[str, Any]:
    return {
        f"{prefix}file": path.name,
        f"{prefix}size": path.stat().st_size,
        f"{prefix}crc32": _crc32(path),
    }


def _intact(path: Path, meta: dict[str, Any], prefix: str) -> bool:
    return bool(
        path.stat().st_size == meta[f"{prefix}size"] and _crc32(path) == meta[f"{prefix}crc32"]
    )


def consistent(conn: sqlite3.Connection, tenant: str, ann: AnnTenant, count: int) -> bool:
    """Whether a loaded graph (after its log replay) holds what SQLite holds: the same number
    of rows and, for a sample of them, the same vectors (float16 rounding aside)."""
    if ann.n != count:
        return False
    # Two statements: SQLite answers a lone min() or max() from the index, both by a scan.
    where = "FROM memory_vectors WHERE tenant = ?"
    low = conn.execute(f"SELECT min(memory_seq) {where}", (tenant,)).fetchone()[0]
    high = conn.execute(f"SELECT max(memory_seq) {where}", (tenant,)).fetchone()[0]
    if low is None:
        return ann.n == 0
    rng = np.random.default_rng()
    rows = []
    for start in rng.integers(int(low), int(high) + 1, size=_SAMPLE):
        rows += conn.execute(  # by the (tenant, rowid) index: no scan of the tenant
            "SELECT memory_seq, vec FROM memory_vectors WHERE tenant = ? AND memory_seq >= ?"
            " ORDER BY memory_seq LIMIT 1",
            (tenant, int(start)),
        ).fetchall()
    for seq, blob in rows:
        vec = np.frombuffer(blob, dtype=np.float32)
        if vec.shape[0] != ann.dim:
            continue
        stored = ann.vector(int(seq))
        if stored is None or float(np.dot(stored, vec)) < 0.99:
            return False
    return True


def _crc32(path: Path) -> int:
    crc = 0
    with path.open("rb") as fh:
        while block := fh.read(1 << 22):
            crc = zlib.crc32(block, crc)
    return crc


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
