"""Contract of ``Store`` and ``Tx`` themselves: the port accessors, what a transaction
guarantees (all or nothing, its own writes visible to it, nobody else's view changed until
commit), and ``close``."""

from __future__ import annotations

import gc
import inspect
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from omoide.errors import NotFound
from omoide.store import protocol
from omoide.store.protocol import NewMemory, Store, Tx
from omoide.types import SearchFilters
from tests.store.contract import ALICE, Backend, add, covers, unit

ACCESSORS = (
    *("memories", "sessions", "jobs", "graph", "chunks", "access", "consolidation"),
    *("variables", "admin", "schedules"),
)


def _port_type(owner: type, name: str) -> Any:
    accessor = vars(owner)[name]
    return inspect.get_annotations(accessor.fget, eval_str=True)["return"]


def _missing(port: object, port_type: type) -> list[str]:
    wanted = [n for n, v in vars(port_type).items() if inspect.isfunction(v) and n[0] != "_"]
    return [n for n in wanted if not callable(getattr(port, n, None))]


@covers(*(getattr(Store, name) for name in ACCESSORS))
def test_every_read_port_has_its_protocols_methods(store: Store) -> None:
    for name in ACCESSORS:
        port_type = _port_type(protocol.Store, name)
        assert not _missing(getattr(store, name), port_type), (name, port_type)


@covers(*(getattr(Tx, name) for name in ACCESSORS))
def test_every_write_port_has_its_protocols_methods(store: Store) -> None:
    with store.transaction() as tx:
        for name in ACCESSORS:
            port_type = _port_type(protocol.Tx, name)
            assert not _missing(getattr(tx, name), port_type), (name, port_type)


def test_a_store_declares_its_capabilities_and_location(store: Store, tmp_path: Path) -> None:
    assert store.capabilities <= set(protocol.Capability)
    assert isinstance(store.location, str) and store.location
    assert "password" not in store.location
    if protocol.Capability.BACKUP in store.capabilities:
        store.admin.backup(tmp_path / "declared.db")
        assert (tmp_path / "declared.db").exists()


@covers(Store.transaction)
def test_transaction_rolls_back_everything_on_error(store: Store) -> None:
    before = store.admin.stats()
    with pytest.raises(RuntimeError), store.transaction() as tx:
        memory_id = tx.memories.insert_memory(ALICE, NewMemory(text="half written"), "test").id
        tx.memories.put_vector(ALICE, memory_id, unit(1, 0))
        tx.jobs.enqueue_job(ALICE, "embed", {"memory_ids": [memory_id]})
        raise RuntimeError("crash in the middle")
    assert store.admin.stats() == before


@covers(Store.transaction)
def test_a_store_error_inside_rolls_back_the_earlier_writes(store: Store) -> None:
    with pytest.raises(NotFound), store.transaction() as tx:
        tx.sessions.ensure_session(ALICE, "s1")
        tx.memories.insert_memory(ALICE, NewMemory(text="first"), "t")
        tx.memories.delete_memory(ALICE, "no-such-id", "t")
    with pytest.raises(NotFound):
        store.sessions.get_session(ALICE, "s1")
    assert store.memories.list_memories(ALICE, SearchFilters(), 10, 0) == ([], 0)


@covers(Store.transaction)
def test_own_writes_are_visible_inside_and_invisible_outside_until_commit(
    store: Store, backend: Backend
) -> None:
    other = backend.open()  # another process on the same database
    with store.transaction() as tx:
        tx.sessions.ensure_session(ALICE, "s1")
        item = tx.memories.insert_memory(
            ALICE, NewMemory(text="fresh jasmine", session_id="s1"), "t"
        )
        last = tx.memories.last_in_session(ALICE, "s1", item.type)
        assert last is not None and last.id == item.id  # the transaction reads its own writes
        assert tx.jobs.has_pending_job(ALICE, "embed", {}) is False
        tx.jobs.enqueue_job(ALICE, "embed", {})
        assert tx.jobs.has_pending_job(ALICE, "embed", {})
        for reader in (store, other):
            assert reader.memories.get_memories(ALICE, [item.id]) == []
            with pytest.raises(NotFound):
                reader.sessions.get_session(ALICE, "s1")
            assert reader.jobs.list_jobs(ALICE, None, 10, 0) == []
    for reader in (store, other):
        assert [m.id for m in reader.memories.get_memories(ALICE, [item.id])] == [item.id]
        assert len(reader.jobs.list_jobs(ALICE, None, 10, 0)) == 1
        assert reader.memories.keyword_search(ALICE, ["jasmine"], SearchFilters(), 5)


@covers(Store.transaction)
def test_a_reader_in_another_thread_never_sees_an_open_transaction(store: Store) -> None:
    inside, checked = threading.Event(), threading.Event()
    seen: list[int] = []

    def read() -> None:
        assert inside.wait(30)
        seen.append(store.memories.list_memories(ALICE, SearchFilters(), 10, 0)[1])
        checked.set()

    reader = threading.Thread(target=read)
    reader.start()
    with store.transaction() as tx:
        tx.memories.insert_memory(ALICE, NewMemory(text="not yet"), "t")
        inside.set()
        assert checked.wait(30)  # reads run while a write is open
    reader.join(30)
    assert seen == [0]
    assert store.memories.list_memories(ALICE, SearchFilters(), 10, 0)[1] == 1


@covers(Store.transaction)
def test_transactions_commit_in_sequence(store: Store) -> None:
    with store.transaction() as tx:
        first = tx.memories.insert_memory(ALICE, NewMemory(text="one"), "t")
    with store.transaction() as tx:
        tx.memories.update_memory(ALICE, first.id, "two", None, "t")
    assert store.memories.get_memories(ALICE, [first.id])[0].text == "two"


@covers(Store.close)
def test_close_keeps_what_was_committed_and_may_be_repeated(backend: Backend) -> None:
    first = backend.open()
    memory_id = add(first, ALICE, "durable tea")
    first.close()
    first.close()
    again = backend.open()
    assert again.memories.get_memories(ALICE, [memory_id])[0].text == "durable tea"


@covers(Store.close)
def test_a_closed_store_refuses_work(backend: Backend) -> None:
    closed = backend.open()
    closed.close()
    with pytest.raises(Exception):  # noqa: B017, PT011 - any error, never a silent success
        add(closed, ALICE, "after close")
    assert backend.open().memories.list_memories(ALICE, SearchFilters(), 10, 0)[1] == 0


def test_reader_connections_close_with_their_threads(store: Store) -> None:
    def read() -> None:
        store.memories.get_memories(ALICE, ["nope"])

    read()
    before = len(os.listdir("/proc/self/fd"))
    # the older objects are frozen: the collection walks only what the threads made (their
    # connections among it), not the run's whole heap; a connection kept alive from an older
    # object stays open either way
    gc.freeze()
    try:
        for _ in range(50):
            thread = threading.Thread(target=read)
            thread.start()
            thread.join()
        gc.collect()
    finally:
        gc.unfreeze()
    assert len(os.listdir("/proc/self/fd")) <= before + 2
