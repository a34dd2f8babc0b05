"""Migration 0006 (issue 16, point 8): a tenant's entities whose names are equal ignoring case
become one, keeping the first specific type, every mention, episode and relationship; stored
free-form types are mapped to the vocabulary exactly as ``entity_type`` maps new ones."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from omoide.llm.prompts.graph import _SYNONYMS, ENTITY_TYPES, entity_type
from omoide.store.sqlite import SQLiteStore, migrate
from omoide.store.sqlite.db import connect
from omoide.types import Scope

ALICE = Scope(user_id="alice", scope_id="demo")


def old_database(path: Path) -> sqlite3.Connection:
    conn = connect(path)
    migrate.migrate(conn, upto=5)
    return conn


def entity(conn: sqlite3.Connection, id_: str, name: str, type_: str, at: int, n: int = 1) -> None:
    conn.execute(
        "INSERT INTO entities (id, user_id, scope_id, name, type, mention_count, last_seen_at,"
        " created_at) VALUES (?, 'alice', 'demo', ?, ?, ?, ?, ?)",
        (id_, name, type_, n, at, at),
    )


def relationship(conn: sqlite3.Connection, id_: str, a: str, b: str, label: str) -> None:
    conn.execute(
        "INSERT INTO relationships (id, user_id, scope_id, from_id, to_id, label, last_seen_at,"
        " created_at) VALUES (?, 'alice', 'demo', ?, ?, ?, 1, 1)",
        (id_, a, b, label),
    )


def test_one_entity_per_name_keeps_mentions_episodes_and_relationships(tmp_path: Path) -> None:
    conn = old_database(tmp_path / "old.db")
    conn.execute(
        "INSERT INTO sessions (id, user_id, scope_id, external_id, created_at, updated_at)"
        " VALUES (1, 'alice', 'demo', 's', 1, 1)"
    )
    for episode in ("e1", "e2"):
        conn.execute(
            "INSERT INTO episodes (id, session_id, user_id, scope_id, messages, created_at)"
            " VALUES (?, 1, 'alice', 'demo', '[]', 1)",
            (episode,),
        )
    entity(conn, "c-friend", "Caroline", "Friend of the user", 1, n=2)  # free-form: other
    entity(conn, "c-person", "caroline", "Person", 2, n=3)  # the first specific type
    entity(conn, "c-woman", "CAROLINE", "woman", 3)
    entity(conn, "melanie", "Melanie", "people", 4)
    conn.execute("INSERT INTO entity_episodes VALUES ('c-friend', 'e1'), ('c-woman', 'e2')")
    relationship(conn, "r1", "c-friend", "melanie", "friend of")
    relationship(conn, "r2", "c-person", "melanie", "friend of")  # the same, twice now
    relationship(conn, "r3", "melanie", "c-woman", "paints with")
    conn.close()
    store = SQLiteStore(tmp_path / "old.db")
    try:
        _, total = store.graph.list_entities(ALICE, None, 10, 0)
        assert total == 2
        caroline = store.graph.get_entity(ALICE, "c-person")
        assert (caroline.name, caroline.type, caroline.mention_count) == ("caroline", "person", 6)
        assert sorted(caroline.episodes) == ["e1", "e2"]
        assert store.graph.get_entity(ALICE, "melanie").type == "person"
        rels = store.graph.list_relationships(ALICE, None, 10, 0)[0]
        assert sorted((r.from_id, r.to_id, r.label) for r in rels) == [
            ("c-person", "melanie", "friend of"),
            ("melanie", "c-person", "paints with"),
        ]
        with store.transaction() as tx:  # and from now on, one entity per name
            again = tx.graph.upsert_entity(ALICE, "Caroline", "location", 9)
        assert again.id == "c-person" and again.type == "person"
    finally:
        store.close()


SPELLINGS = [
    *ENTITY_TYPES,
    *(word for words in _SYNONYMS.values() for word in words),
    *(f"{word}s" for words in _SYNONYMS.values() for word in words),
    "Person",
    " CITY ",
    "Friend of the user",
    "woman",
    "persons",
    "",
]


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_stored_types_are_mapped_as_entity_type_maps_them(tmp_path: Path, spelling: str) -> None:
    conn = old_database(tmp_path / "old.db")
    entity(conn, "x", "X", spelling, 1)
    conn.close()
    store = SQLiteStore(tmp_path / "old.db")
    try:
        assert store.graph.get_entity(ALICE, "x").type == entity_type(spelling)
    finally:
        store.close()
