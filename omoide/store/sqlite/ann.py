"""An approximate (HNSW, usearch) index of one large tenant, a rebuildable cache beside the file.

Why: an exact scan of 1M x 384 floats is ~45 ms of memory bandwidth per query and holds 1.5 GB
(plus copies while loading); the graph answers in a few ms from float16 vectors (768 MB).
Tenants below ``THRESHOLD`` vectors (off by default) stay exact (``vectors._TenantMatrix``):
there the scan is fast and never misses. SQLite stays the source of truth. Every candidate the
graph returns is re-scored from its float32 row in ``memory_vectors`` (so scores equal the exact
ones and a row deleted meanwhile is dropped), and the caller falls back to an exact scan of the
filtered rows when filters are selective.

On disk: ``<db>.ann/<tenant digest>.json`` names the index file, its size and CRC-32, its
dimension and the ``vec_log`` sequence it reflects. Loading checks all of that, replays the
tenant's log entries written since (by any process), then compares the row count and a sample
of vectors with SQLite; any mismatch, a trimmed log or a damaged file means a rebuild.
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
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

# Vectors in a tenant from which it gets a graph: off unless OMOIDE_ANN_THRESHOLD is set (e.g.
# 50000), because recall at 722k of bench/scale.py's vectors is 0.76 with these parameters (see
# EF_SEARCH); below that size the exact scan is fast enough.
THRESHOLD: int | None = None
# Candidates the graph explores per query. Measured on 150k of bench/scale.py's LoCoMo-based
# vectors (bench/ann_store.py): recall@10 against exact, equal-score ties counted, 0.971 at 160,
# 0.987 at 320, 0.988 at 640; p50 under 4 ms at 320 on a loaded machine. NOT enough at 722k
# of the same vectors: 0.76 at 320, 0.86 at 1000, 0.91 at 3000 (p50 3 / 11 / 19 ms); the
# corpus repeats each of 1,814 sentence vectors ~100 times there, and EF_ADD / CONNECTIVITY
# were not tuned (a build took 13 min on the loaded machine).
EF_SEARCH = 320
MAX_FETCH = 1_000  # beyond this many candidates an exact scan of the filtered rows is cheaper
CONNECTIVITY = 16
EF_ADD = 64
_FORMAT = 1  # bump when the file layout or the index parameters change
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


def threshold() -> int | None:
    raw = os.environ.get("OMOIDE_ANN_THRESHOLD", "")
    return int(raw) if raw.strip().isdigit() else THRESHOLD


def ef_search() -> int:
    """``EF_SEARCH``, or ``OMOIDE_ANN_EF`` (a knob for benchmarks: recall against speed)."""
    raw = os.environ.get("OMOIDE_ANN_EF", "")
    return int(raw) if raw.strip().isdigit() else EF_SEARCH


class AnnTenant:
    """One tenant's graph, keyed by ``memory_seq``; ``log_seq`` is the ``vec_log`` it reflects."""

    def __init__(self, index: Any, dim: int) -> None:
        self.index = index
        self.dim = dim
        self.dirty = 0  # changes since the file was written
        self.ef = ef_search()

    @property
    def n(self) -> int:
        return len(self.index)

    def put(self, seq: int, vec: np.ndarray) -> None:
        if vec.shape[0] != self.dim:
            return  # a stale vector of another model; reindex replaces it
        if seq in self.index:
            self.index.remove(seq)
        self.index.add(seq, vec.astype(np.float32, copy=False))
        self.dirty += 1

    def put_many(self, pairs: list[tuple[int, np.ndarray]]) -> None:
        pairs = [(seq, vec) for seq, vec in pairs if vec.shape[0] == self.dim]
        if not pairs:
            return
        keys = np.fromiter((seq for seq, _ in pairs), dtype=np.uint64, count=len(pairs))
        present = self.index.contains(keys)
        if np.any(present):
            self.index.remove(keys[present])
        self.index.add(keys, np.stack([vec for _, vec in pairs]), threads=os.cpu_count() or 1)
        self.dirty += len(pairs)

    def remove(self, seq: int) -> None:
        if seq in self.index:
            self.index.remove(seq)
            self.dirty += 1

    def candidates(self, query: np.ndarray, k: int) -> list[int]:
        self.index.expansion_search = max(self.ef, k)
        found = self.index.search(query, min(k, self.n))
        return [int(key) for key in found.keys]


def new_index(dim: int) -> Any:
    return _usearch()(
        ndim=dim,
        metric="ip",  # rows are unit vectors: inner product is the cosine
        dtype="f16",
        connectivity=CONNECTIVITY,
        expansion_add=EF_ADD,
        expansion_search=EF_SEARCH,
    )


def build(conn: sqlite3.Connection, tenant: str, dim: int) -> AnnTenant:
    """A graph of every ``dim``-sized vector of ``tenant``, read in chunks (no full copy)."""
    index = new_index(dim)
    cursor = conn.execute("SELECT memory_seq, vec FROM memory_vectors WHERE tenant = ?", (tenant,))
    while chunk := cursor.fetchmany(_CHUNK):
        chunk = [r for r in chunk if len(r[1]) == dim * 4]
        if not chunk:
            continue
        keys = np.fromiter((r[0] for r in chunk), dtype=np.uint64, count=len(chunk))
        vecs = np.frombuffer(b"".join(r[1] for r in chunk), dtype=np.float32)
        index.add(keys, vecs.reshape(-1, dim), threads=os.cpu_count() or 1)
    return AnnTenant(index, dim)


class AnnFiles:
    """The graphs' files beside the database; ``None`` for an in-memory database."""

    def __init__(self, db_path: Path | None) -> None:
        self.dir = None if db_path is None else db_path.with_name(db_path.name + ".ann")

    def _meta_path(self, tenant: str) -> Path:
        assert self.dir is not None
        digest = hashlib.blake2b(tenant.encode(), digest_size=12).hexdigest()
        return self.dir / f"{digest}.json"

    def save(self, tenant: str, ann: AnnTenant, log_seq: int) -> None:
        """Write the graph and then its description, each by rename (readers never see half)."""
        if self.dir is None:
            return
        try:
            self.dir.mkdir(mode=0o700, exist_ok=True)
            meta_path = self._meta_path(tenant)
            old = _read_json(meta_path)
            name = f"{meta_path.stem}.{os.urandom(6).hex()}.usearch"
            tmp = self.dir / (name + ".tmp")
            ann.index.save(str(tmp))
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.dir / name)
            meta = {
                "format": _FORMAT,
                "tenant": tenant,
                "file": name,
                "size": (self.dir / name).stat().st_size,
                "crc32": _crc32(self.dir / name),
                "dim": ann.dim,
                "count": ann.n,
                "log_seq": log_seq,
            }
            tmp_meta = meta_path.with_suffix(".json.tmp" + os.urandom(4).hex())
            tmp_meta.write_text(json.dumps(meta))
            os.chmod(tmp_meta, 0o600)  # it names the tenant
            os.replace(tmp_meta, meta_path)
            ann.dirty = 0
            if old and old.get("file") not in (None, name):
                with contextlib.suppress(OSError):
                    (self.dir / str(old["file"])).unlink()
        except OSError as exc:  # a cache: searching goes on without the file
            log.warning("cannot write the vector index cache in %s: %s", self.dir, exc)

    def load(self, tenant: str) -> tuple[AnnTenant, int] | None:
        """The saved graph and the ``vec_log`` sequence it reflects, or ``None`` if there is
        none or it fails a check (size, CRC, format, tenant)."""
        if self.dir is None:
            return None
        meta = _read_json(self._meta_path(tenant))
        if not meta or meta.get("format") != _FORMAT or meta.get("tenant") != tenant:
            return None
        path = self.dir / str(meta.get("file", ""))
        try:
            if path.stat().st_size != meta["size"] or _crc32(path) != meta["crc32"]:
                log.warning("vector index cache %s is damaged: rebuilding", path)
                return None
            index = new_index(int(meta["dim"]))
            index.load(str(path))
        except (OSError, KeyError, ValueError, RuntimeError) as exc:
            log.warning("cannot read the vector index cache %s: %s", path, exc)
            return None
        if index.ndim != meta["dim"] or len(index) != meta["count"]:
            return None
        return AnnTenant(index, int(meta["dim"])), int(meta["log_seq"])


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
        stored = ann.index.get(int(seq))
        if stored is None:
            return False
        if float(np.dot(np.asarray(stored, dtype=np.float32).ravel(), vec)) < 0.99:
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
