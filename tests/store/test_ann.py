"""The approximate (HNSW) vector index of large SQLite tenants: a cache that never changes what
a search may return (deleted rows, filters, other processes' writes) and rebuilds when damaged.

The threshold is lowered (the store's ``ann_threshold``, ``OMOIDE_ANN_THRESHOLD``) so that a
3,000-row tenant gets a graph.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from omoide.config import load_settings
from omoide.store.ports.memories import NewMemory
from omoide.store.sqlite import SQLiteStore, ann, vectors
from omoide.store.sqlite.rows import tenant_key
from omoide.types import MemoryType, SearchFilters
from omoide.wiring import build_engine
from tests.store.contract import ALICE, BOB

# not importorskip: importing usearch before onnxruntime crashes the latter (see ann._usearch)
pytestmark = pytest.mark.skipif(not ann.available(), reason="usearch is not installed")

N, DIM, THRESHOLD = 3_000, 32, 1_000
REPO = Path(__file__).resolve().parents[2]


def clustered(n: int, seed: int) -> np.ndarray:
    """Unit vectors around 40 centres: embeddings of a conversation are clustered, not uniform."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((40, DIM))
    vecs = centres[rng.integers(0, 40, n)] + 0.4 * rng.standard_normal((n, DIM))
    return (vecs / np.linalg.norm(vecs, axis=1, keepdims=True)).astype(np.float32)


def fill(store: SQLiteStore, vecs: np.ndarray) -> list[str]:
    """One memory per vector; every 100th is SEMANTIC and in session ``s1`` (selective)."""
    ids = []
    with store.transaction() as tx:
        tx.sessions.ensure_session(ALICE, "s1")
        for i, vec in enumerate(vecs):
            rare = i % 100 == 0
            new = NewMemory(
                text=f"memory {i}",
                type=MemoryType.SEMANTIC if rare else MemoryType.RAW,
                session_id="s1" if rare else None,
            )
            ids.append(tx.memories.insert_memory(ALICE, new, "test").id)
            tx.memories.put_vector(ALICE, ids[-1], vec)
    return ids


def exact(vecs: np.ndarray, ids: list[str], query: np.ndarray, k: int) -> list[str]:
    order = np.argsort(-(vecs @ query), kind="stable")[:k]
    return [ids[i] for i in order]


@pytest.fixture
def big(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[SQLiteStore, np.ndarray, list]:
    store = SQLiteStore(tmp_path / "m.db", ann_threshold=THRESHOLD)
    vecs = clustered(N, seed=1)
    ids = fill(store, vecs)
    yield store, vecs, ids
    store.close()


def search(store: SQLiteStore, query: np.ndarray, k: int = 10, **filters: object) -> list[str]:
    hits = store.memories.vector_search(ALICE, query, SearchFilters(**filters), k)  # type: ignore[arg-type]
    return [h[0] for h in hits]


def recall(store: SQLiteStore, vecs: np.ndarray, ids: list[str], queries: np.ndarray) -> float:
    found = [len(set(search(store, q)) & set(exact(vecs, ids, q, 10))) for q in queries]
    return sum(found) / (10 * len(queries))


def cache_files(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "m.db.ann").glob("*.usearch"))


def test_a_large_tenant_is_searched_through_a_graph_with_recall_of_at_least_098(
    big: tuple[SQLiteStore, np.ndarray, list], tmp_path: Path
) -> None:
    store, vecs, ids = big
    queries = clustered(100, seed=2)
    assert recall(store, vecs, ids, queries) >= 0.98
    assert len(cache_files(tmp_path)) == 1  # the graph was built and written beside the file
    for path in (tmp_path / "m.db.ann").iterdir():  # conversations are private
        assert path.stat().st_mode & 0o077 == 0
    # scores are the exact cosines of the float32 rows, best first
    hits = store.memories.vector_search(ALICE, queries[0], SearchFilters(), 10)
    want = {ids[i]: float(vecs[i] @ queries[0]) for i in range(N)}
    assert [h[1] for h in hits] == pytest.approx([want[h[0]] for h in hits], abs=1e-5)
    assert [h[1] for h in hits] == sorted((h[1] for h in hits), reverse=True)


def test_a_small_tenant_stays_exact_and_tenants_never_mix(
    big: tuple[SQLiteStore, np.ndarray, list],
) -> None:
    store, _, _ = big
    with store.transaction() as tx:
        bob = tx.memories.insert_memory(BOB, NewMemory(text="bob"), "test").id
        tx.memories.put_vector(BOB, bob, clustered(1, seed=3)[0])
    hits = store.memories.vector_search(BOB, clustered(1, seed=4)[0], SearchFilters(), 10)
    assert [h[0] for h in hits] == [bob]
    assert bob not in search(store, clustered(1, seed=3)[0], k=50)


def test_deleted_memories_are_never_returned(
    big: tuple[SQLiteStore, np.ndarray, list], tmp_path: Path
) -> None:
    store, vecs, ids = big
    queries = clustered(20, seed=5)
    doomed = {i for q in queries for i in exact(vecs, list(range(N)), q, 10)}  # type: ignore[arg-type]
    search(store, queries[0])  # the graph exists before the deletes
    with store.transaction() as tx:
        for i in doomed:
            tx.memories.delete_memory(ALICE, ids[i], "test")
    gone = {ids[i] for i in doomed}
    for q in queries:
        assert not gone & set(search(store, q, k=30))
    # a later process loads the saved graph and replays the deletes since
    store.close()
    again = SQLiteStore(tmp_path / "m.db", ann_threshold=THRESHOLD)
    try:
        for q in queries:
            assert not gone & set(search(again, q, k=30))
    finally:
        again.close()


def test_another_process_insert_is_found_by_the_next_search(
    big: tuple[SQLiteStore, np.ndarray, list], tmp_path: Path
) -> None:
    store, _, _ = big
    query = clustered(1, seed=6)[0]
    search(store, query)  # graph loaded in this process
    script = (
        "import sys, numpy as np\n"
        "from omoide.store.ports.memories import NewMemory\n"
        "from omoide.store.sqlite import SQLiteStore\n"
        "from tests.store.contract import ALICE\n"
        f"s = SQLiteStore(sys.argv[1], ann_threshold={THRESHOLD})\n"
        "with s.transaction() as tx:\n"
        "    m = tx.memories.insert_memory(ALICE, NewMemory(text='new'), 'other')\n"
        "    tx.memories.put_vector(ALICE, m.id, np.load(sys.argv[2]))\n"
        "print(m.id)\n"
        "s.close()\n"
    )
    np.save(tmp_path / "q.npy", query)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "m.db"), str(tmp_path / "q.npy")],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert search(store, query)[0] == out.stdout.strip()


def test_a_damaged_cache_file_is_ignored_and_rebuilt(
    big: tuple[SQLiteStore, np.ndarray, list], tmp_path: Path
) -> None:
    store, vecs, ids = big
    queries = clustered(50, seed=7)
    search(store, queries[0])
    store.close()
    (path,) = cache_files(tmp_path)
    data = bytearray(path.read_bytes())
    data[len(data) // 2 : len(data) // 2 + 4096] = os.urandom(4096)
    path.write_bytes(bytes(data))
    again = SQLiteStore(tmp_path / "m.db", ann_threshold=THRESHOLD)
    try:
        assert recall(again, vecs, ids, queries) >= 0.98
        (rebuilt,) = cache_files(tmp_path)
        assert rebuilt != path  # a new file replaced the damaged one
    finally:
        again.close()


def test_a_cache_of_another_state_is_not_trusted(
    big: tuple[SQLiteStore, np.ndarray, list], tmp_path: Path
) -> None:
    """A graph file that no longer matches the rows (e.g. a database restored from a backup
    under the same name) fails the count or sample check and is rebuilt."""
    store, vecs, ids = big
    search(store, vecs[0])
    store.close()
    other = SQLiteStore(
        tmp_path / "m.db", ann_threshold=THRESHOLD
    )  # rewrite every vector behind the cache's back
    rotated = np.roll(vecs, 1, axis=0)
    with other.transaction() as tx:
        for i, memory_id in enumerate(ids):
            tx.memories.put_vector(ALICE, memory_id, rotated[i])
    other._writer.execute("DELETE FROM vec_log")  # as if the log had been trimmed
    other.close()
    again = SQLiteStore(tmp_path / "m.db", ann_threshold=THRESHOLD)
    try:
        assert recall(again, rotated, ids, clustered(50, seed=8)) >= 0.98
    finally:
        again.close()


def test_filters_stay_exact_when_they_are_selective(
    big: tuple[SQLiteStore, np.ndarray, list],
) -> None:
    store, vecs, ids = big
    rare = [i for i in range(N) if i % 100 == 0]
    rare_vecs, rare_ids = vecs[rare], [ids[i] for i in rare]
    for q in clustered(10, seed=9):
        want = exact(rare_vecs, rare_ids, q, 10)
        assert search(store, q, types=[MemoryType.SEMANTIC]) == want
        assert search(store, q, session_id="s1") == want


def test_onnxruntime_still_loads_after_a_graph_was_made() -> None:
    """usearch's extension loaded first makes `import onnxruntime` crash the process; the query
    embedder loads after the first search has built or loaded a graph."""
    pytest.importorskip("onnxruntime")
    script = (
        "from omoide.store.sqlite import ann\n"
        "ann.new_index(8)\n"
        "import onnxruntime\n"
        "print(onnxruntime.get_device())\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", script], env=env, timeout=120, check=False)
    assert done.returncode == 0


def tie_recall(store: SQLiteStore, vecs: np.ndarray, queries: np.ndarray) -> float:
    """Share of returned rows scoring at least the exact 10th best (copies of one vector tie,
    so which of them an exact scan lists is arbitrary)."""
    found = 0
    for q in queries:
        tenth = np.sort(vecs @ q)[-10]
        hits = store.memories.vector_search(ALICE, q, SearchFilters(), 10)
        found += sum(score >= tenth - 1e-5 for _, score in hits)
    return found / (10 * len(queries))


@pytest.fixture
def copies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[SQLiteStore, np.ndarray, list]:
    """3,000 rows repeating 100 vectors 30 times each (repeated messages), then 1,000 others."""
    store = SQLiteStore(tmp_path / "m.db", ann_threshold=THRESHOLD)
    base = clustered(1_100, seed=11)
    vecs = np.concatenate([np.repeat(base[:100], 30, axis=0), base[100:]])
    ids = fill(store, vecs)
    yield store, vecs, ids
    store.close()


def test_repeated_vectors_are_found_with_their_copies(
    copies: tuple[SQLiteStore, np.ndarray, list], tmp_path: Path
) -> None:
    store, vecs, ids = copies
    queries = np.concatenate([vecs[::300][:10] + 0.05, clustered(40, seed=12)])
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    assert tie_recall(store, vecs, queries) >= 0.98
    # the copies of the nearest vector come back, each under its own id and exact score
    hits = store.memories.vector_search(ALICE, vecs[0], SearchFilters(), 40)
    assert {h[0] for h in hits[:30]} == set(ids[:30])
    assert [h[1] for h in hits[:30]] == pytest.approx([1.0] * 30, abs=1e-5)
    store.close()
    again = SQLiteStore(
        tmp_path / "m.db", ann_threshold=THRESHOLD
    )  # from the saved graph and its rows
    try:
        assert tie_recall(again, vecs, queries) >= 0.98
        assert {
            h[0] for h in again.memories.vector_search(ALICE, vecs[0], SearchFilters(), 30)
        } == set(ids[:30])
    finally:
        again.close()


def test_deleting_some_copies_keeps_the_others_and_deleting_all_drops_them(
    copies: tuple[SQLiteStore, np.ndarray, list], tmp_path: Path
) -> None:
    store, vecs, ids = copies
    search(store, vecs[0])  # the graph exists before the deletes
    with store.transaction() as tx:
        for memory_id in ids[:29]:  # the first copy of vector 0 too (the one first filed)
            tx.memories.delete_memory(ALICE, memory_id, "test")
        for memory_id in ids[30:60]:  # every copy of vector 1
            tx.memories.delete_memory(ALICE, memory_id, "test")
    assert search(store, vecs[0], k=1) == [ids[29]]
    assert not set(ids[30:60]) & set(search(store, vecs[30], k=50))
    # a copy added again (its vector has no node left) is found
    with store.transaction() as tx:
        tx.memories.put_vector(ALICE, ids[29], vecs[30])
    assert search(store, vecs[30], k=1) == [ids[29]]
    assert ids[29] not in search(store, vecs[0], k=5)
    store.close()
    again = SQLiteStore(tmp_path / "m.db", ann_threshold=THRESHOLD)
    try:
        assert search(again, vecs[30], k=1) == [ids[29]]
        assert not (set(ids[:29]) | set(ids[30:60])) & set(search(again, vecs[0], k=50))
    finally:
        again.close()


def test_a_damaged_rows_file_is_ignored_and_rebuilt(
    copies: tuple[SQLiteStore, np.ndarray, list], tmp_path: Path
) -> None:
    store, vecs, ids = copies
    search(store, vecs[0])
    store.close()
    (path,) = sorted((tmp_path / "m.db.ann").glob("*.groups"))
    data = bytearray(path.read_bytes())
    data[len(data) // 2 : len(data) // 2 + 64] = os.urandom(64)
    path.write_bytes(bytes(data))
    again = SQLiteStore(tmp_path / "m.db", ann_threshold=THRESHOLD)
    try:
        assert {
            h[0] for h in again.memories.vector_search(ALICE, vecs[0], SearchFilters(), 30)
        } == set(ids[:30])
        assert sorted((tmp_path / "m.db.ann").glob("*.groups")) != [path]
    finally:
        again.close()


def test_a_large_graph_is_built_in_the_background_while_searches_stay_exact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above ann.SYNC_BUILD rows the first search does not wait for the graph (minutes at
    1M rows): it is answered exactly; writes made during the build are in the graph after."""
    monkeypatch.setattr(ann, "SYNC_BUILD", THRESHOLD)
    store = SQLiteStore(tmp_path / "m.db", ann_threshold=THRESHOLD)
    try:
        vecs = clustered(N, seed=13)
        ids = fill(store, vecs)
        queries = clustered(20, seed=14)
        assert search(store, queries[0]) == exact(vecs, ids, queries[0], 10)  # exact meanwhile
        matrix = store._vectors._tenants.get(tenant_key(ALICE))
        if matrix is not None and not isinstance(matrix, ann.AnnTenant):  # the build is on
            assert not matrix.half  # below vectors.HALF_FROM: the fast float32 scan
        with store.transaction() as tx:  # during the build, or after it: found either way
            new = tx.memories.insert_memory(ALICE, NewMemory(text="new"), "test").id
            tx.memories.put_vector(ALICE, new, queries[1])
            tx.memories.delete_memory(ALICE, ids[0], "test")
        assert store._vectors.wait_for_builds(timeout=600)  # generous: seconds here
        search(store, queries[2])  # switches to the graph
        assert isinstance(store._vectors._tenants.get(tenant_key(ALICE)), ann.AnnTenant)
        assert search(store, queries[1], k=1) == [new]
        assert ids[0] not in search(store, vecs[0], k=30)
        now = np.concatenate([vecs[1:], queries[1:2]]), [*ids[1:], new]
        assert recall(store, *now, queries[3:]) >= 0.98
    finally:
        store.close()


@pytest.fixture
def building(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[SQLiteStore, np.ndarray, list[str], threading.Event]]:
    """A tenant above the threshold whose graph build waits for the returned event."""
    monkeypatch.setattr(ann, "SYNC_BUILD", THRESHOLD)
    monkeypatch.setattr(vectors, "HALF_FROM", THRESHOLD)
    release = threading.Event()
    real_build = ann.build

    def held_build(*args: Any, **kwargs: Any) -> ann.AnnTenant:
        assert release.wait(600)
        return real_build(*args, **kwargs)

    monkeypatch.setattr(ann, "build", held_build)
    store = SQLiteStore(tmp_path / "m.db", ann_threshold=THRESHOLD)
    vecs = clustered(N, seed=21)
    ids = fill(store, vecs)
    search(store, vecs[0])  # loads the tenant; the build waits
    try:
        yield store, vecs, ids, release
    finally:
        release.set()
        store.close()


def test_while_a_graph_is_built_the_scan_holds_float16_and_answers_exactly(
    building: tuple[SQLiteStore, np.ndarray, list[str], threading.Event],
) -> None:
    """During a build the tenant's matrix is float16 (half the memory beside the growing graph):
    its top k is re-scored from the float32 rows, so ids, order and scores are the exact scan's,
    including rows written and deleted during the build."""
    store, vecs, ids, release = building
    matrix = store._vectors._tenants[tenant_key(ALICE)]
    assert not isinstance(matrix, ann.AnnTenant) and matrix.half
    assert matrix.mat.dtype == np.float16
    queries = clustered(40, seed=22)
    for k in (1, 10, 60):
        for q in queries[:20]:
            hits = store.memories.vector_search(ALICE, q, SearchFilters(), k)
            scores = vecs @ q
            assert [h[0] for h in hits] == exact(vecs, ids, q, k)
            for memory_id, score in hits:
                assert score == pytest.approx(float(scores[ids.index(memory_id)]), abs=1e-6)
    # cosine ~0.99995 to row 5: float32 tells them apart, float16 (error ~5e-4) need not
    near = vecs[5] + 0.01 * clustered(1, seed=23)[0]
    near = (near / np.linalg.norm(near)).astype(np.float32)
    with store.transaction() as tx:
        twin = tx.memories.insert_memory(ALICE, NewMemory(text="twin"), "test").id
        tx.memories.put_vector(ALICE, twin, near)
        tx.memories.delete_memory(ALICE, ids[7], "test")
    now = np.concatenate([vecs, near[None]]), [*ids, twin]
    expected = [i for i in exact(*now, vecs[5], 12) if i != ids[7]][:10]
    assert search(store, vecs[5]) == expected and expected[:2] == [ids[5], twin]
    assert ids[7] not in search(store, vecs[7], k=50)
    release.set()
    assert store._vectors.wait_for_builds(timeout=600)
    search(store, queries[30])  # switches to the graph
    assert isinstance(store._vectors._tenants.get(tenant_key(ALICE)), ann.AnnTenant)
    assert search(store, near, k=1) == [twin]


def test_rows_near_the_kth_best_are_ranked_by_their_float32_scores(
    building: tuple[SQLiteStore, np.ndarray, list[str], threading.Event],
) -> None:
    """40 rows within float16's error of each other: the k-th best and its neighbours come from
    re-scoring every row near the boundary, not from the float16 order."""
    store, vecs, ids, _ = building
    crowd = vecs[9] + 0.05 * clustered(40, seed=24)
    crowd = (crowd / np.linalg.norm(crowd, axis=1, keepdims=True)).astype(np.float32)
    crowd_ids = fill(store, crowd)
    every = np.concatenate([vecs, crowd]), [*ids, *crowd_ids]
    exact_by_seq = {
        seq: float(every[0][every[1].index(memory_id)] @ vecs[9])
        for memory_id, seq in store._db.reader().execute("SELECT id, seq FROM memories")
    }
    ranked = sorted(exact_by_seq.values(), reverse=True)
    for k in (5, 17, 33):
        top, _, approximate = store._vectors.top_k(
            store._db.reader(), tenant_key(ALICE), vecs[9], k
        )
        assert len(top) == k and not approximate
        scores = [score for _, score in top]
        assert scores == sorted(scores, reverse=True)
        for seq, score in top:  # exact scores (float32 sums may differ in the last bit)
            assert score == pytest.approx(exact_by_seq[seq], abs=1e-6)
        assert scores[-1] == pytest.approx(ranked[k - 1], abs=1e-6)  # none better left out


def test_an_encrypted_store_writes_no_graph_beside_its_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The graph holds the tenant's vectors: beside an encrypted file it would leak them."""
    pytest.importorskip("sqlcipher3", reason="the encryption extra is not installed")
    store = SQLiteStore(
        tmp_path / "m.db", key="correct horse battery staple", ann_threshold=THRESHOLD
    )
    try:
        vecs = clustered(N, seed=15)
        ids = fill(store, vecs)
        assert recall(store, vecs, ids, clustered(30, seed=16)) >= 0.98
        assert not (tmp_path / "m.db.ann").exists()
    finally:
        store.close()


@pytest.mark.parametrize(("raw", "graph"), [(str(THRESHOLD), True), ("off", False), ("", False)])
def test_the_settings_threshold_reaches_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, raw: str, graph: bool
) -> None:
    """OMOIDE_ANN_THRESHOLD is read with the other settings and handed to the store (unset:
    the default, above this tenant's size); OMOIDE_ANN_EF sets the graph's search breadth."""
    monkeypatch.setenv("OMOIDE_ANN_THRESHOLD", raw)
    monkeypatch.setenv("OMOIDE_ANN_EF", "48")
    settings = load_settings(home=tmp_path, embedder="hash", llm_base_url=None)
    engine = build_engine(settings, path=tmp_path / "m.db", workers=0)
    try:
        store = engine.store
        assert isinstance(store, SQLiteStore)
        vecs = clustered(N, seed=17)
        ids = fill(store, vecs)
        assert search(store, vecs[3])[0] == ids[3]
        assert bool(cache_files(tmp_path)) is graph
        if graph:
            tenant = store._vectors._tenants[tenant_key(ALICE)]
            assert isinstance(tenant, ann.AnnTenant)
            assert tenant.ef == 48
    finally:
        engine.close()
