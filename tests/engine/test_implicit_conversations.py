"""Issue 13, point 4: chat turns added without a session are still linked as a conversation.

A turn's neighbours (the question it answers) are part of what the keyword index sees, so the
answer "Mango, definitely." is found by the question's words. With sessions the neighbours are
the session's turns; without, the tenant's chat messages in arrival order, starting a new
conversation after a gap of more than 30 minutes or on a new (UTC) day
(``omoide.engine.memories``). Issue 31, point 3: only chat messages (a list of role-bearing
messages; in ``add_many``, records whose metadata names a ``role``) are linked so; a plain text,
such as the one fact an agent writes, never is, and a setting turns linking off.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from omoide import Memory
from omoide.config import Settings
from omoide.embed.hashing import HashEmbedder
from omoide.engine.memories import CONVERSATION_GAP_MS, same_conversation
from omoide.store.protocol import NewMemory
from omoide.types import dt_to_ms

QUESTION = "What is your favourite fruit?"
ANSWER = "Mango, definitely."
T0 = "2023-05-08T13:56:00+00:00"


def said(text: str, at: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text, "timestamp": at}]


def found(m: Memory, query: str, user_id: str = "alice") -> list[str]:
    hits = m.search(query, user_id=user_id, recipe="keyword", limit=10).hits
    return [h.memory.text for h in hits]


def test_turns_added_one_by_one_without_a_session_are_neighbours(hash_memory: Memory) -> None:
    hash_memory.add(said(QUESTION, T0), user_id="alice", infer=False)
    hash_memory.add(said(ANSWER, "2023-05-08T13:57:00+00:00"), user_id="alice", infer=False)
    assert ANSWER in found(hash_memory, "favourite fruit")
    # and the question is found by the answer's words (it got the next turn as context)
    assert QUESTION in found(hash_memory, "mango")


def test_turns_without_a_time_are_linked_in_arrival_order(hash_memory: Memory) -> None:
    hash_memory.add([{"role": "user", "content": QUESTION}], user_id="alice", infer=False)
    hash_memory.add([{"role": "assistant", "content": ANSWER}], user_id="alice", infer=False)
    assert ANSWER in found(hash_memory, "favourite fruit")


def test_plain_texts_are_never_linked(hash_memory: Memory) -> None:
    """Two facts written a minute apart stay apart, and so does a chat turn after them."""
    at = datetime.fromisoformat(T0)
    hash_memory.add(QUESTION, user_id="alice", infer=False, timestamp=at)
    hash_memory.add(ANSWER, user_id="alice", infer=False, timestamp=at + timedelta(minutes=1))
    hash_memory.add(said("Bananas are fine too.", "2023-05-08T13:58:00+00:00"), user_id="alice")
    assert found(hash_memory, "favourite fruit") == [QUESTION]
    assert found(hash_memory, "mango") == [ANSWER]
    assert found(hash_memory, "bananas") == ["Bananas are fine too."]


def test_a_setting_turns_linking_off(tmp_path: Path) -> None:
    settings = Settings(implicit_conversations=False)
    with Memory(tmp_path / "o.db", embedder=HashEmbedder(), workers=0, settings=settings) as m:
        m.add(said(QUESTION, T0), user_id="alice", infer=False)
        m.add(said(ANSWER, "2023-05-08T13:57:00+00:00"), user_id="alice", infer=False)
        assert found(m, "favourite fruit") == [QUESTION]
        # sessions still link their turns
        m.add(said(QUESTION, T0), user_id="bob", session_id="s", infer=False)
        m.add(said(ANSWER, "2023-05-08T13:57:00+00:00"), user_id="bob", session_id="s")
        assert ANSWER in found(m, "favourite fruit", user_id="bob")


def test_a_gap_of_more_than_half_an_hour_starts_a_new_conversation(hash_memory: Memory) -> None:
    hash_memory.add(said(QUESTION, T0), user_id="alice", infer=False)
    hash_memory.add(said(ANSWER, "2023-05-08T14:27:01+00:00"), user_id="alice", infer=False)
    hash_memory.add(said("Bananas are fine too.", "2023-05-08T14:40:00+00:00"), user_id="alice")
    assert found(hash_memory, "favourite fruit") == [QUESTION]
    # the new conversation links its own turns
    assert "Bananas are fine too." in found(hash_memory, "mango")


def test_a_new_day_starts_a_new_conversation(hash_memory: Memory) -> None:
    hash_memory.add(said(QUESTION, "2023-05-08T23:55:00+00:00"), user_id="alice", infer=False)
    hash_memory.add(said(ANSWER, "2023-05-09T00:05:00+00:00"), user_id="alice", infer=False)
    assert found(hash_memory, "favourite fruit") == [QUESTION]


def test_two_users_turns_are_never_linked(hash_memory: Memory) -> None:
    hash_memory.add(said(QUESTION, T0), user_id="alice", infer=False)
    hash_memory.add(said(ANSWER, "2023-05-08T13:57:00+00:00"), user_id="bob", infer=False)
    hash_memory.add(said("I like tea.", "2023-05-08T13:57:30+00:00"), user_id="alice")
    assert found(hash_memory, "favourite fruit", user_id="bob") == []
    assert found(hash_memory, "mango", user_id="alice") == []
    assert "I like tea." in found(hash_memory, "favourite fruit")


def test_a_session_turn_in_between_ends_the_implicit_conversation(hash_memory: Memory) -> None:
    hash_memory.add(said(QUESTION, T0), user_id="alice", infer=False)
    hash_memory.add(
        said("Meanwhile, in a chat.", "2023-05-08T13:56:30+00:00"), user_id="alice", session_id="s"
    )
    hash_memory.add(said(ANSWER, "2023-05-08T13:57:00+00:00"), user_id="alice", infer=False)
    assert ANSWER not in found(hash_memory, "favourite fruit")


def test_add_many_splits_a_batch_at_its_gaps(hash_memory: Memory) -> None:
    start = dt_to_ms_iso(T0)
    chat = {"role": "user"}
    records = [
        NewMemory(text=QUESTION, created_at_ms=start, metadata=chat),
        NewMemory(text=ANSWER, created_at_ms=start + 60_000, metadata=chat),
        NewMemory(text="Where shall we travel?", created_at_ms=start + 2 * 3600_000, metadata=chat),
        NewMemory(text="Lisbon in spring.", created_at_ms=start + 2 * 3600_060, metadata=chat),
    ]
    hash_memory.add_many(records, user_id="alice")
    assert set(found(hash_memory, "favourite fruit")) == {QUESTION, ANSWER}
    assert set(found(hash_memory, "travel")) == {"Where shall we travel?", "Lisbon in spring."}
    assert set(found(hash_memory, "mango")) == {QUESTION, ANSWER}


def test_turns_of_a_session_are_linked_as_before(hash_memory: Memory) -> None:
    hash_memory.add(QUESTION, user_id="alice", session_id="s1", infer=False)
    hash_memory.add("Something else entirely.", user_id="alice", infer=False)
    hash_memory.add(ANSWER, user_id="alice", session_id="s1", infer=False)
    assert ANSWER in found(hash_memory, "favourite fruit")


def test_the_rule_at_its_bounds() -> None:
    start = dt_to_ms_iso(T0)
    assert same_conversation(start, start + CONVERSATION_GAP_MS)
    assert not same_conversation(start, start + CONVERSATION_GAP_MS + 1)
    midnight = dt_to_ms_iso("2023-05-09T00:00:00+00:00")
    assert not same_conversation(midnight - 1, midnight)


def dt_to_ms_iso(text: str) -> int:
    from datetime import datetime

    return dt_to_ms(datetime.fromisoformat(text))


def test_add_many_links_only_chat_records(hash_memory: Memory) -> None:
    start = dt_to_ms_iso(T0)
    records = [
        NewMemory(text=QUESTION, created_at_ms=start),
        NewMemory(text=ANSWER, created_at_ms=start + 60_000),
    ]
    hash_memory.add_many(records, user_id="alice")
    assert found(hash_memory, "favourite fruit") == [QUESTION]
