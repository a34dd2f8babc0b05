"""The same memories through both backends read back the same, and a PostgreSQL backup
restores into a new schema with everything in it."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from omoide.store import open_store
from omoide.store.postgres import PostgresStore, restore_backup
from omoide.store.protocol import NewMemory, Store
from omoide.types import MemoryItem, MemoryType, Message, SearchFilters
from tests.postgres.server import fresh_schema
from tests.store.contract import ALICE, BOB, unit

VECTORS = [unit(1, 0, 0), unit(1, 1, 0), unit(0, 1, 1)]


def _fill(store: Store, *, other_tenant: bool = True) -> list[str]:
    with store.transaction() as tx:
        tx.sessions.create_session(ALICE, "s1", "trip", "travel", {"k": "v"})
        [episode] = [
            tx.sessions.insert_episode(ALICE, "s1", [Message(role="user", content="to Kyoto")])
        ]
        ids = []
        for n, text in enumerate(["booked a ryokan in Kyoto", "likes matcha", "allergic to nuts"]):
            item = tx.memories.insert_memory(
                ALICE,
                NewMemory(
                    text=text,
                    type=MemoryType.RAW if n == 0 else MemoryType.SEMANTIC,
                    metadata={"n": n, "ok": True},
                    session_id="s1",
                    source_episodes=[episode.id] if n == 0 else [],
                    created_at_ms=1_000 + n,
                ),
                "test",
            )
            tx.memories.put_vector(ALICE, item.id, VECTORS[n])
            ids.append(item.id)
        tx.jobs.enqueue_job(ALICE, "embed", {"memory_ids": ids})
        tx.graph.upsert_entity(ALICE, "Kyoto", "place", 1_000, episode.id)
        tx.variables.set_variables(ALICE, {"city": ("Kyoto", "string")}, 1_000)
        if other_tenant:
            tx.memories.insert_memory(BOB, NewMemory(text="bob likes matcha too"), "test")
    return ids


def _view(store: Store, ids: list[str]) -> list[object]:
    """What a user sees, with the backend's own ids replaced by their insertion order."""
    order = {memory_id: n for n, memory_id in enumerate(ids)}

    def plain(item: MemoryItem) -> tuple[object, ...]:
        return (order[item.id], item.text, item.type, item.metadata, item.session_id,
                len(item.source_episodes), item.created_at, item.embedded)  # fmt: skip

    listed, total = store.memories.list_memories(ALICE, SearchFilters(), 10, 0)
    keyword = store.memories.keyword_search(ALICE, ["matcha", "kyoto"], SearchFilters(), 5)
    vector = store.memories.vector_search(ALICE, unit(1, 0.2, 0), SearchFilters(), 5)
    facts = SearchFilters(types=[MemoryType.SEMANTIC], metadata={"ok": True})
    return [
        [plain(m) for m in listed],
        total,
        [(order[i], round(s, 5)) for i, s in keyword],
        [(order[i], round(s, 5)) for i, s in vector],
        [order[m.id] for m in store.memories.latest_memories(ALICE, facts, 5)],
        store.sessions.get_session(ALICE, "s1").model_dump(exclude={"created_at", "updated_at"}),
        [e.name for e in store.graph.find_entities(ALICE, "a trip to kyoto", 5)],
        [v.value for v in store.variables.get_variables(ALICE, None)],
        store.jobs.job_counts(ALICE),
    ]


def test_the_same_memories_read_back_the_same_on_both_backends(
    pg_store: PostgresStore, tmp_path: Path
) -> None:
    sqlite = open_store(tmp_path / "same.db")
    try:
        # One tenant only: SQLite's bm25 statistics span every tenant (see test_keyword.py).
        pg_ids, sqlite_ids = _fill(pg_store, other_tenant=False), _fill(sqlite, other_tenant=False)
        assert _view(pg_store, pg_ids) == _view(sqlite, sqlite_ids)
    finally:
        sqlite.close()


def test_a_backup_restores_everything_into_a_new_schema(
    pg_store: PostgresStore, tmp_path: Path
) -> None:
    ids = _fill(pg_store)
    pg_store.admin.backup(tmp_path / "backup.jsonl")
    target = fresh_schema()
    restore_backup(target, tmp_path / "backup.jsonl")
    copy = PostgresStore(target)
    try:
        assert _view(copy, ids) == _view(pg_store, ids)
        assert copy.admin.stats() == pg_store.admin.stats()
        with copy.transaction() as tx:  # identities continue past the restored rows
            fresh = tx.memories.insert_memory(ALICE, NewMemory(text="after restore"), "t")
            job_id = tx.jobs.enqueue_job(ALICE, "embed", {})
        assert copy.memories.get_memories(ALICE, [fresh.id])[0].text == "after restore"
        assert job_id > max(j.id for j in pg_store.jobs.list_jobs(None, None, 10, 0))
        assert np.isclose(
            copy.memories.vector_search(ALICE, VECTORS[2], SearchFilters(), 1)[0][1], 1
        )
    finally:
        copy.close()
