"""The Store contract, written once against the protocol. A new backend adds itself to
``store_factory`` and must pass every test here."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from omoide.errors import Conflict, NotFound
from omoide.store.protocol import NewMemory, SessionPatch, Store
from omoide.store.sqlite import SQLiteStore
from omoide.types import HistoryEvent, JobState, MemoryType, Message, Scope, SearchFilters

ALICE = Scope(user_id="alice", scope_id="demo")
BOB = Scope(user_id="bob", scope_id="demo")
ALICE_OTHER = Scope(user_id="alice", scope_id="other")


def _sqlite(path: Path) -> Store:
    return SQLiteStore(path / "contract.db")


BACKENDS: dict[str, Callable[[Path], Store]] = {"sqlite": _sqlite}


@pytest.fixture(params=sorted(BACKENDS))
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    backend = BACKENDS[request.param](tmp_path)
    yield backend
    backend.close()


def unit(*values: float) -> np.ndarray:
    v = np.array(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def add(store: Store, scope: Scope, text: str, **kw: object) -> str:
    with store.transaction() as tx:
        return tx.memories.insert_memory(scope, NewMemory(text=text, **kw), "test").id  # type: ignore[arg-type]


def test_insert_then_get_returns_the_memory(store: Store) -> None:
    memory_id = add(store, ALICE, "I like jasmine tea", metadata={"k": 1})
    [item] = store.memories.get_memories(ALICE, [memory_id])
    assert (item.text, item.metadata, item.type) == ("I like jasmine tea", {"k": 1}, MemoryType.RAW)
    assert item.invalid_at is None and not item.embedded


@pytest.mark.parametrize("other", [BOB, ALICE_OTHER])
def test_no_read_crosses_tenants(store: Store, other: Scope) -> None:
    memory_id = add(store, ALICE, "secret tea preference")
    with store.transaction() as tx:
        tx.memories.put_vector(ALICE, memory_id, unit(1, 0, 0))
    assert store.memories.get_memories(other, [memory_id]) == []
    assert store.memories.list_memories(other, SearchFilters(), 10, 0) == ([], 0)
    assert store.memories.keyword_search(other, ["tea"], SearchFilters(), 10) == []
    assert store.memories.vector_search(other, unit(1, 0, 0), SearchFilters(), 10) == []
    with pytest.raises(NotFound):
        store.memories.history(other, memory_id)
    with pytest.raises(NotFound), store.transaction() as tx:
        tx.memories.delete_memory(other, memory_id, "test")
    assert store.memories.get_memories(ALICE, [memory_id])


def test_transaction_rolls_back_everything_on_error(store: Store) -> None:
    before = store.admin.stats()
    with pytest.raises(RuntimeError), store.transaction() as tx:
        memory_id = tx.memories.insert_memory(ALICE, NewMemory(text="half written"), "test").id
        tx.memories.put_vector(ALICE, memory_id, unit(1, 0))
        tx.jobs.enqueue_job(ALICE, "embed", {"memory_ids": [memory_id]})
        raise RuntimeError("crash in the middle")
    assert store.admin.stats() == before


def test_keyword_search_ranks_and_survives_fts_syntax(store: Store) -> None:
    add(store, ALICE, "jasmine tea every morning")
    add(store, ALICE, "coffee at night")
    hits = store.memories.keyword_search(ALICE, ["jasmine", "tea"], SearchFilters(), 10)
    assert len(hits) == 1
    for nasty in ['"', "AND", "NEAR(", "*", "tea OR", "col:tea", "'", "(", "^"]:
        store.memories.keyword_search(ALICE, [nasty], SearchFilters(), 10)


def test_vector_search_orders_by_cosine_and_respects_filters(store: Store) -> None:
    ids = {}
    for name, vec, kind in [
        ("a", unit(1, 0, 0), MemoryType.RAW),
        ("b", unit(0.9, 0.1, 0), MemoryType.SEMANTIC),
        ("c", unit(0, 1, 0), MemoryType.RAW),
    ]:
        ids[name] = add(store, ALICE, f"memory {name}", type=kind)
        with store.transaction() as tx:
            tx.memories.put_vector(ALICE, ids[name], vec)
    hits = store.memories.vector_search(ALICE, unit(1, 0, 0), SearchFilters(), 3)
    assert [h[0] for h in hits] == [ids["a"], ids["b"], ids["c"]]
    assert hits[0][1] == pytest.approx(1.0, abs=1e-5)
    only_raw = store.memories.vector_search(
        ALICE, unit(1, 0, 0), SearchFilters(types=[MemoryType.RAW]), 3
    )
    assert [h[0] for h in only_raw] == [ids["a"], ids["c"]]


def test_deleted_memory_is_never_served(store: Store) -> None:
    memory_id = add(store, ALICE, "to be forgotten tea")
    with store.transaction() as tx:
        tx.memories.put_vector(ALICE, memory_id, unit(1, 0))
    assert store.memories.vector_search(ALICE, unit(1, 0), SearchFilters(), 5)
    with store.transaction() as tx:
        tx.memories.delete_memory(ALICE, memory_id, "test")
    assert store.memories.vector_search(ALICE, unit(1, 0), SearchFilters(), 5) == []
    assert store.memories.keyword_search(ALICE, ["forgotten"], SearchFilters(), 5) == []
    events = [h.event for h in store.memories.history(ALICE, memory_id)]
    assert events == [HistoryEvent.ADD, HistoryEvent.DELETE]


def test_update_records_history_and_drops_stale_vector(store: Store) -> None:
    memory_id = add(store, ALICE, "likes green tea")
    with store.transaction() as tx:
        tx.memories.put_vector(ALICE, memory_id, unit(1, 0))
        item = tx.memories.update_memory(ALICE, memory_id, "likes jasmine tea", None, "test")
    assert item.text == "likes jasmine tea" and not item.embedded
    [_add_entry, update] = store.memories.history(ALICE, memory_id)
    assert (update.event, update.old_text, update.new_text) == (
        HistoryEvent.UPDATE,
        "likes green tea",
        "likes jasmine tea",
    )
    assert store.memories.keyword_search(ALICE, ["green"], SearchFilters(), 5) == []
    assert store.memories.keyword_search(ALICE, ["jasmine"], SearchFilters(), 5)


def test_list_returns_page_and_true_total(store: Store) -> None:
    for i in range(7):
        add(store, ALICE, f"memory number {i}")
    add(store, BOB, "bob's memory")
    items, total = store.memories.list_memories(ALICE, SearchFilters(), 3, 3)
    assert total == 7 and len(items) == 3
    texts = [i.text for i in items]
    assert texts == ["memory number 3", "memory number 2", "memory number 1"]


def test_sessions_episodes_and_cascading_delete(store: Store) -> None:
    with store.transaction() as tx:
        tx.sessions.create_session(ALICE, "s1", "first", None, {"a": 1})
        episode = tx.sessions.insert_episode(
            ALICE, "s1", [Message(role="user", content="hello tea")]
        )
        memory = tx.memories.insert_memory(
            ALICE, NewMemory(text="hello tea", session_id="s1", source_episodes=[episode.id]), "t"
        )
        tx.memories.put_vector(ALICE, memory.id, unit(1, 0))
        tx.jobs.enqueue_job(ALICE, "embed", {"memory_ids": [memory.id]})
    assert store.memories.get_memories(ALICE, [memory.id])[0].source_episodes == [episode.id]
    with pytest.raises(Conflict), store.transaction() as tx:
        tx.sessions.create_session(ALICE, "s1", None, None, {})
    with store.transaction() as tx:
        session = tx.sessions.update_session(ALICE, "s1", SessionPatch(name="renamed"))
    assert (session.name, session.metadata) == ("renamed", {"a": 1})  # untouched field kept
    episodes, total = store.sessions.list_episodes(ALICE, "s1", 10, 0)
    assert total == 1 and episodes[0].messages[0].content == "hello tea"
    with store.transaction() as tx:
        assert tx.sessions.delete_session(ALICE, "s1") == 1
    assert store.memories.get_memories(ALICE, [memory.id]) == []
    assert store.memories.vector_search(ALICE, unit(1, 0), SearchFilters(), 5) == []
    with pytest.raises(NotFound):
        store.sessions.get_session(ALICE, "s1")


def test_isolated_project_sees_only_its_sessions(store: Store) -> None:
    with store.transaction() as tx:
        tx.sessions.upsert_project(ALICE, "secret", None, True)
        tx.sessions.create_session(ALICE, "in-secret", None, "secret", {})
        tx.sessions.create_session(ALICE, "open", None, None, {})
        inside = tx.memories.insert_memory(
            ALICE, NewMemory(text="tea inside", session_id="in-secret"), "t"
        )
        outside = tx.memories.insert_memory(
            ALICE, NewMemory(text="tea outside", session_id="open"), "t"
        )

    def ids(project: str | None) -> set[str]:
        hits = store.memories.keyword_search(ALICE, ["tea"], SearchFilters(project=project), 10)
        return {h[0] for h in hits}

    assert ids("secret") == {inside.id}
    assert ids(None) == {outside.id}


def test_delete_scope_removes_only_that_tenant(store: Store) -> None:
    add(store, ALICE, "alice tea")
    bob_id = add(store, BOB, "bob tea")
    other_id = add(store, ALICE_OTHER, "alice other tea")
    with store.transaction() as tx:
        assert tx.admin.delete_scope(ALICE) == 1
    assert store.memories.list_memories(ALICE, SearchFilters(), 10, 0)[1] == 0
    assert store.memories.get_memories(BOB, [bob_id]) and store.memories.get_memories(
        ALICE_OTHER, [other_id]
    )


def test_validity_filters(store: Store) -> None:
    with store.transaction() as tx:
        tx.memories.insert_memory(ALICE, NewMemory(text="valid tea fact", valid_from_ms=1000), "t")
    items, total = store.memories.list_memories(ALICE, SearchFilters(), 10, 0)
    assert total == 1 and items[0].valid_from.timestamp() == 1.0


def test_jobs_claim_fail_retry(store: Store) -> None:
    with store.transaction() as tx:
        job_id = tx.jobs.enqueue_job(ALICE, "embed", {"memory_ids": []}, max_attempts=2)
    [job] = store.jobs.claim_jobs(10, 60_000)
    assert (job.id, job.state, job.attempts) == (job_id, JobState.RUNNING, 1)
    assert store.jobs.claim_jobs(10, 60_000) == []  # leased
    assert store.jobs.fail_job(job_id, "boom", 0) == JobState.PENDING
    [job] = store.jobs.claim_jobs(10, 60_000)
    assert store.jobs.fail_job(job_id, "boom again", 0) == JobState.FAILED
    assert store.jobs.job_counts(ALICE)["failed"] == 1 and store.jobs.job_counts(BOB)["failed"] == 0
    with pytest.raises(NotFound):
        store.jobs.retry_job(BOB, job_id)
    assert store.jobs.retry_job(ALICE, job_id).state == JobState.PENDING


def test_expired_lease_is_claimed_again(store: Store) -> None:
    with store.transaction() as tx:
        tx.jobs.enqueue_job(ALICE, "embed", {})
    assert len(store.jobs.claim_jobs(10, -1)) == 1  # lease already expired: a dead worker
    [again] = store.jobs.claim_jobs(10, 60_000)
    assert again.attempts == 2


def test_backup_is_a_complete_copy(store: Store, tmp_path: Path) -> None:
    memory_id = add(store, ALICE, "backed up tea")
    target = tmp_path / "backup.db"
    store.admin.backup(target)
    copy = SQLiteStore(target)
    try:
        assert copy.memories.get_memories(ALICE, [memory_id])[0].text == "backed up tea"
    finally:
        copy.close()


def test_reader_connections_close_with_their_threads(store: Store) -> None:
    import gc
    import os
    import threading

    def read() -> None:
        store.memories.get_memories(ALICE, ["nope"])

    read()
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(50):
        thread = threading.Thread(target=read)
        thread.start()
        thread.join()
    gc.collect()
    assert len(os.listdir("/proc/self/fd")) <= before + 2
