"""Contract of ``SessionReads`` / ``SessionWrites``: sessions, episodes and projects."""

from __future__ import annotations

import pytest

from omoide.errors import Conflict, InvalidInput, NotFound
from omoide.store.ports.sessions import SessionPatch, SessionReads, SessionWrites
from omoide.store.protocol import NewMemory, Store
from omoide.types import Message, SearchFilters
from tests.store.contract import ALICE, BOB, OTHERS, add, covers, session_with_episodes, unit


@covers(
    SessionWrites.create_session,
    SessionWrites.insert_episode,
    SessionWrites.update_session,
    SessionWrites.delete_session,
    SessionReads.list_episodes,
    SessionReads.get_session,
)
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


@covers(SessionWrites.create_session, SessionReads.get_session)
def test_session_ids_are_per_tenant_and_never_empty(store: Store) -> None:
    with store.transaction() as tx:
        mine = tx.sessions.create_session(ALICE, "chat", "mine", "work", {"k": "v"})
        theirs = tx.sessions.create_session(BOB, "chat", "theirs", None, {})
    assert (mine.name, mine.project, mine.metadata) == ("mine", "work", {"k": "v"})
    assert store.sessions.get_session(ALICE, "chat") == mine
    assert store.sessions.get_session(BOB, "chat") == theirs
    assert store.sessions.get_project(ALICE, "work").name == "work"  # created on first use
    with pytest.raises(InvalidInput), store.transaction() as tx:
        tx.sessions.create_session(ALICE, "", None, None, {})
    for other in OTHERS[1:]:
        with pytest.raises(NotFound):
            store.sessions.get_session(other, "chat")


@covers(SessionWrites.ensure_session)
def test_ensure_session_creates_once_and_returns_the_existing_one(store: Store) -> None:
    with store.transaction() as tx:
        created = tx.sessions.ensure_session(ALICE, "s1")
        tx.sessions.update_session(ALICE, "s1", SessionPatch(name="named", metadata={"x": 1}))
        again = tx.sessions.ensure_session(ALICE, "s1")
    assert created.id == again.id == "s1"
    assert (again.name, again.metadata) == ("named", {"x": 1})
    assert store.sessions.list_sessions(ALICE, 10, 0)[1] == 1


@covers(SessionWrites.ensure_sessions)
def test_ensure_sessions_creates_the_missing_ones_of_the_tenant_only(store: Store) -> None:
    with store.transaction() as tx:
        tx.sessions.create_session(ALICE, "old", "kept", None, {"x": 1})
        tx.sessions.ensure_sessions(ALICE, ["b", "old", "a", "b"])
        tx.sessions.ensure_sessions(ALICE, [])
    assert store.sessions.get_session(ALICE, "old").name == "kept"  # not replaced
    sessions, total = store.sessions.list_sessions(ALICE, 10, 0)
    assert total == 3 and {s.id for s in sessions} == {"old", "a", "b"}
    new = [s for s in sessions if s.id != "old"]
    assert all((s.name, s.project, s.metadata) == (None, None, {}) for s in new)
    for other in OTHERS:
        assert store.sessions.list_sessions(other, 10, 0)[1] == 0
    with pytest.raises(InvalidInput), store.transaction() as tx:
        tx.sessions.ensure_sessions(ALICE, ["c", ""])
    with pytest.raises(NotFound):
        store.sessions.get_session(ALICE, "c")  # the refused call wrote nothing


@covers(SessionWrites.update_session)
def test_update_session_moves_projects_and_refuses_unknown_sessions(store: Store) -> None:
    with store.transaction() as tx:
        tx.sessions.create_session(ALICE, "s1", None, "a", {})
        moved = tx.sessions.update_session(ALICE, "s1", SessionPatch(project="b"))
        replaced = tx.sessions.update_session(ALICE, "s1", SessionPatch(metadata={"n": 2}))
    assert (moved.project, replaced.project, replaced.metadata) == ("b", "b", {"n": 2})
    for scope in (ALICE, BOB):
        with pytest.raises(NotFound), store.transaction() as tx:
            tx.sessions.update_session(scope, "s1" if scope == BOB else "nope", SessionPatch())


@covers(SessionReads.list_sessions)
def test_list_sessions_newest_first_with_total_and_tenant(store: Store) -> None:
    for name in ("a", "b", "c"):
        session_with_episodes(store, ALICE, name)
    session_with_episodes(store, BOB, "bobs")
    page, total = store.sessions.list_sessions(ALICE, 2, 0)
    assert total == 3 and [s.id for s in page] == ["c", "b"]
    assert [s.id for s in store.sessions.list_sessions(ALICE, 2, 2)[0]] == ["a"]
    assert [s.id for s in store.sessions.list_sessions(BOB, 10, 0)[0]] == ["bobs"]


@covers(SessionReads.list_episodes, SessionReads.get_episode, SessionWrites.insert_episode)
def test_episodes_in_insertion_order_and_per_tenant(store: Store) -> None:
    ids = session_with_episodes(store, ALICE, "s1", ["one"], ["two", "three"], ["four"])
    page, total = store.sessions.list_episodes(ALICE, "s1", 2, 1)
    assert total == 3 and [e.id for e in page] == ids[1:]
    episode = store.sessions.get_episode(ALICE, ids[1])
    assert [m.content for m in episode.messages] == ["two", "three"]
    assert episode.session_id == "s1" and episode.consolidated_at is None
    with pytest.raises(NotFound):
        store.sessions.get_episode(BOB, ids[1])
    with pytest.raises(NotFound):
        store.sessions.list_episodes(ALICE, "nope", 10, 0)
    with pytest.raises(NotFound), store.transaction() as tx:
        tx.sessions.insert_episode(BOB, "s1", [Message(content="sneaky")])


@covers(SessionWrites.delete_session)
def test_delete_session_is_per_tenant(store: Store) -> None:
    session_with_episodes(store, ALICE, "s1", ["a"])
    session_with_episodes(store, BOB, "s1", ["b"])
    kept = add(store, BOB, "bob's", session_id="s1")
    with pytest.raises(NotFound), store.transaction() as tx:
        tx.sessions.delete_session(ALICE, "nope")
    with store.transaction() as tx:
        assert tx.sessions.delete_session(ALICE, "s1") == 0
    assert store.sessions.list_episodes(BOB, "s1", 10, 0)[1] == 1
    assert store.memories.get_memories(BOB, [kept])


@covers(SessionWrites.delete_episode)
def test_delete_episode_takes_only_the_memories_it_alone_supports(store: Store) -> None:
    first, second = session_with_episodes(store, ALICE, "s1", ["a"], ["b"])
    only = add(store, ALICE, "from the first", session_id="s1", source_episodes=[first])
    shared = add(store, ALICE, "from both", session_id="s1", source_episodes=[first, second])
    with pytest.raises(NotFound), store.transaction() as tx:
        tx.sessions.delete_episode(BOB, first)
    with store.transaction() as tx:
        assert tx.sessions.delete_episode(ALICE, first) == 1
    assert [m.id for m in store.memories.get_memories(ALICE, [only, shared])] == [shared]
    assert [e.id for e in store.sessions.list_episodes(ALICE, "s1", 10, 0)[0]] == [second]
    with pytest.raises(NotFound):
        store.sessions.get_episode(ALICE, first)


@covers(SessionWrites.upsert_project, SessionReads.get_project)
def test_upsert_project_creates_then_updates_keeping_a_missing_description(
    store: Store,
) -> None:
    with store.transaction() as tx:
        created = tx.sessions.upsert_project(ALICE, "work", "day job", False)
        updated = tx.sessions.upsert_project(ALICE, "work", None, True)
    assert (created.description, created.isolated) == ("day job", False)
    assert (updated.description, updated.isolated) == ("day job", True)
    assert store.sessions.get_project(ALICE, "work") == updated
    with store.transaction() as tx:
        tx.sessions.insert_project(ALICE, "art", {"colour": "#f00", "notes": "n"})
        kept = tx.sessions.upsert_project(ALICE, "art", "drawing", False)
    assert (kept.colour, kept.notes, kept.description) == ("#f00", "n", "drawing")
    assert store.sessions.get_project(ALICE, "art") == kept
    with pytest.raises(NotFound):
        store.sessions.get_project(BOB, "work")


@covers(SessionWrites.insert_project, SessionReads.get_project)
def test_insert_project_stores_its_fields_and_refuses_a_taken_name(store: Store) -> None:
    fields = {"description": "d", "colour": "#fff", "icon": "i", "notes": "n", "isolated": True}
    with store.transaction() as tx:
        project = tx.sessions.insert_project(ALICE, "p", {**fields, "system_prompt": "be kind"})
        tx.sessions.insert_project(BOB, "p", {})  # another tenant may use the name
    got = store.sessions.get_project(ALICE, "p")
    assert got == project
    assert (got.colour, got.icon, got.notes, got.system_prompt, got.isolated) == (
        "#fff",
        "i",
        "n",
        "be kind",
        True,
    )
    with pytest.raises(Conflict), store.transaction() as tx:
        tx.sessions.insert_project(ALICE, "p", {})


@covers(SessionWrites.update_project)
def test_update_project_sets_only_given_fields_and_renames(store: Store) -> None:
    with store.transaction() as tx:
        tx.sessions.insert_project(ALICE, "p", {"description": "d", "notes": "n"})
        tx.sessions.insert_project(ALICE, "taken", {})
        tx.sessions.create_session(ALICE, "s1", None, "p", {})
        renamed = tx.sessions.update_project(ALICE, "p", {"name": "q", "notes": "m"})
    assert (renamed.name, renamed.description, renamed.notes) == ("q", "d", "m")
    assert store.sessions.get_session(ALICE, "s1").project == "q"
    with pytest.raises(NotFound):
        store.sessions.get_project(ALICE, "p")
    with pytest.raises(Conflict), store.transaction() as tx:
        tx.sessions.update_project(ALICE, "q", {"name": "taken"})
    with pytest.raises(NotFound), store.transaction() as tx:
        tx.sessions.update_project(BOB, "q", {"notes": "x"})


@covers(SessionWrites.delete_project)
def test_delete_project_detaches_its_sessions(store: Store) -> None:
    with store.transaction() as tx:
        tx.sessions.insert_project(ALICE, "p", {})
        tx.sessions.create_session(ALICE, "s1", None, "p", {})
        tx.sessions.create_session(ALICE, "s2", None, "p", {})
    with pytest.raises(NotFound), store.transaction() as tx:
        tx.sessions.delete_project(BOB, "p")
    with store.transaction() as tx:
        assert tx.sessions.delete_project(ALICE, "p") == 2
    assert store.sessions.get_session(ALICE, "s1").project is None
    with pytest.raises(NotFound):
        store.sessions.get_project(ALICE, "p")


@covers(SessionReads.list_projects)
def test_list_projects_by_name_with_total_and_tenant(store: Store) -> None:
    with store.transaction() as tx:
        for name in ("b", "c", "a"):
            tx.sessions.insert_project(ALICE, name, {})
        tx.sessions.insert_project(BOB, "z", {})
    page, total = store.sessions.list_projects(ALICE, 2, 1)
    assert total == 3 and [p.name for p in page] == ["b", "c"]
    assert [p.name for p in store.sessions.list_projects(BOB, 10, 0)[0]] == ["z"]


@covers(SessionWrites.upsert_project, SessionWrites.create_session)
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
    assert ids("no-such-project") == set()
