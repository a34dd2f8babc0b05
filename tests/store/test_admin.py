"""Contract of ``AdminReads`` / ``AdminWrites``: metadata, stats, backups, tenant deletes."""

from __future__ import annotations

from pathlib import Path

import pytest

from omoide.errors import InvalidInput, NotFound
from omoide.store.ports.admin import AdminReads, AdminWrites
from omoide.store.protocol import Store
from omoide.types import SearchFilters
from tests.store.contract import ALICE, ALICE_OTHER, BOB, Backend, add, covers, enqueue, unit


@covers(AdminReads.schema_version)
def test_schema_version_is_stamped_and_survives_a_reopen(backend: Backend) -> None:
    first = backend.open()
    version = first.admin.schema_version()
    assert version >= 1
    add(first, ALICE, "tea")
    first.close()
    assert backend.open().admin.schema_version() == version


@covers(AdminReads.get_meta, AdminWrites.set_meta)
def test_meta_is_a_string_map_written_in_transactions(store: Store) -> None:
    assert store.admin.get_meta("embedder") is None
    with store.transaction() as tx:
        tx.admin.set_meta("embedder", "minilm:384")
    with store.transaction() as tx:
        tx.admin.set_meta("embedder", "bge:768")
    assert store.admin.get_meta("embedder") == "bge:768"
    with pytest.raises(RuntimeError), store.transaction() as tx:
        tx.admin.set_meta("embedder", "half written")
        raise RuntimeError("crash")
    assert store.admin.get_meta("embedder") == "bge:768"


@covers(AdminReads.stats)
def test_stats_count_rows_of_every_kind(store: Store) -> None:
    assert store.admin.stats()["memories"] == 0
    memory_id = add(store, ALICE, "tea")
    add(store, BOB, "coffee")
    with store.transaction() as tx:
        tx.memories.put_vector(ALICE, memory_id, unit(1, 0))
        tx.sessions.ensure_session(ALICE, "s1")
        tx.jobs.enqueue_job(ALICE, "embed", {})
        tx.graph.upsert_entity(ALICE, "Mei", "person", 1)
        tx.variables.set_variables(ALICE, {"a": ("b", "string")}, 1)
    stats = store.admin.stats()
    assert (stats["memories"], stats["memory_vectors"], stats["sessions"]) == (2, 1, 1)
    assert (stats["jobs"], stats["entities"], stats["variables"]) == (1, 1, 1)
    assert stats["memories_fts"] == 2 and stats["history"] == 2


@covers(AdminReads.size_bytes)
def test_size_is_what_the_store_takes_on_disk_and_grows_with_it(store: Store) -> None:
    before = store.admin.size_bytes()
    assert before > 0  # the schema itself takes pages
    for n in range(200):
        add(store, ALICE, f"note {n} about tea " * 20)
    assert store.admin.size_bytes() > before


@covers(AdminReads.backup)
def test_backup_is_a_complete_copy(store: Store, backend: Backend, tmp_path: Path) -> None:
    memory_id = add(store, ALICE, "backed up tea")
    target = tmp_path / "backup.db"
    store.admin.backup(target)
    copy = backend.open_backup(target)
    assert copy.memories.get_memories(ALICE, [memory_id])[0].text == "backed up tea"
    assert copy.memories.keyword_search(ALICE, ["backed"], SearchFilters(), 5)[0][0] == memory_id


@covers(AdminReads.backup)
def test_backup_never_overwrites(store: Store, tmp_path: Path) -> None:
    target = tmp_path / "taken.db"
    target.write_text("precious")
    with pytest.raises(InvalidInput):
        store.admin.backup(target)
    assert target.read_text() == "precious"


@covers(AdminWrites.delete_scope)
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


@covers(AdminWrites.delete_scope)
def test_delete_scope_takes_every_kind_of_row_of_the_tenant(store: Store) -> None:
    for scope in (ALICE, BOB):
        with store.transaction() as tx:
            tx.sessions.create_session(scope, "s1", None, "p", {})
            tx.jobs.enqueue_job(scope, "embed", {})
            tx.graph.upsert_entity(scope, "Mei", "person", 1)
            tx.variables.set_variables(scope, {"a": ("b", "string")}, 1)
            tx.variables.add_usage(scope, 1, 1, 1, 1)
    with store.transaction() as tx:
        assert tx.admin.delete_scope(ALICE) == 0
    with pytest.raises(NotFound):
        store.sessions.get_session(ALICE, "s1")
    assert store.sessions.list_projects(ALICE, 10, 0)[1] == 0
    assert store.jobs.list_jobs(ALICE, None, 10, 0) == []
    assert store.graph.list_entities(ALICE, None, 10, 0)[1] == 0
    assert store.variables.get_variables(ALICE, None) == []
    assert store.variables.token_usage(ALICE).requests == 0
    assert store.sessions.get_session(BOB, "s1").project == "p"
    assert len(store.jobs.list_jobs(BOB, None, 10, 0)) == 1
    assert store.variables.token_usage(BOB).requests == 1


@covers(AdminWrites.delete_everything)
def test_delete_everything_empties_the_store(store: Store) -> None:
    for scope in (ALICE, BOB):
        add(store, scope, "tea")
        enqueue(store, scope)
        with store.transaction() as tx:
            tx.sessions.ensure_session(scope, "s1")
            tx.graph.upsert_entity(scope, "Mei", "person", 1)
            tx.admin.set_meta("k", "v")
    with store.transaction() as tx:
        tx.admin.delete_everything()
    assert {k: v for k, v in store.admin.stats().items() if v} == {}
    assert store.admin.get_meta("k") is None
    assert store.jobs.claim_jobs(10, 60_000) == []
