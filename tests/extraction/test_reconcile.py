"""One fact through ADD, UPDATE and DELETE: superseded, never erased, queryable as of any time."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest

from omoide import Memory, MemoryType, SearchFilters
from omoide.engine.extraction import steps
from omoide.types import JobState, Scope, dt_to_ms
from tests.extraction.conftest import script, skip_backoff
from tests.fakes import FakeLLMServer

FACTS_ONLY = {
    "enable_user_profile": False,
    "enable_episodic_memory": False,
    "enable_summary_memory": False,
    "enable_graph": False,
}


def valid_facts(memory: Memory, **filters: object) -> list[str]:
    f = SearchFilters(types=[MemoryType.SEMANTIC], **filters)  # type: ignore[arg-type]
    return [i.text for i in memory.get_all(user_id="u", filters=f).items]


def found(memory: Memory, **filters: object) -> list[str]:
    f = SearchFilters(types=[MemoryType.SEMANTIC], **filters)  # type: ignore[arg-type]
    return [h.memory.text for h in memory.search("user lives", user_id="u", filters=f).hits]


def test_add_update_delete_keeps_every_version(mem: Memory, fake_llm: FakeLLMServer) -> None:
    script(fake_llm, facts=["The user lives in Osaka"])
    [v1] = mem.add_messages("I live in Osaka", user_id="u", wait=True, **FACTS_ONLY).extracted
    time.sleep(0.005)
    script(
        fake_llm,
        facts=["The user lives in Berlin"],
        reconcile=[{"op": "UPDATE", "id": "0", "text": "The user lives in Berlin"}],
    )
    [v2] = mem.add_messages("I moved to Berlin", user_id="u", wait=True, **FACTS_ONLY).extracted
    assert '"text": "The user lives in Osaka"' in fake_llm.requests[2]["messages"][1]["content"]
    assert v2.supersedes == v1.id and valid_facts(mem) == ["The user lives in Berlin"]
    time.sleep(0.005)
    script(
        fake_llm,
        facts=["The user no longer lives in Berlin"],
        reconcile=[{"op": "DELETE", "id": "0", "text": "The user no longer lives in Berlin"}],
    )
    gone = mem.add_messages("I left Berlin for good", user_id="u", wait=True, **FACTS_ONLY)
    assert gone.extraction.state == "done" and gone.extracted == []
    assert gone.extraction.steps["semantic"]["detail"] == "0 ADD, 0 UPDATE, 1 DELETE, 0 NOOP"

    # After the DELETE no version is valid; both rows remain, each with its validity interval.
    assert valid_facts(mem) == [] and found(mem) == []
    old, new = mem.get(v1.id, user_id="u"), mem.get(v2.id, user_id="u")
    assert old.invalid_at == new.valid_from and new.invalid_at is not None
    assert valid_facts(mem, include_invalid=True) == [new.text, old.text]

    # One history for the fact, whichever version is asked: ADD, UPDATE (old -> new), DELETE.
    for version in (v1.id, v2.id):
        history = mem.history(version, user_id="u")
        assert [(h.event.value, h.old_text, h.new_text) for h in history] == [
            ("ADD", None, "The user lives in Osaka"),
            ("UPDATE", "The user lives in Osaka", "The user lives in Berlin"),
            ("DELETE", "The user lives in Berlin", None),
        ]

    # as_of returns each past state, through listing and through search.
    ms = timedelta(milliseconds=1)
    assert old.invalid_at is not None and new.invalid_at is not None
    states = [
        (old.valid_from - ms, []),
        (old.valid_from, ["The user lives in Osaka"]),
        (new.valid_from - ms, ["The user lives in Osaka"]),
        (new.valid_from, ["The user lives in Berlin"]),
        (new.invalid_at - ms, ["The user lives in Berlin"]),
        (new.invalid_at, []),
    ]
    for at, expected in states:
        assert valid_facts(mem, as_of=at) == expected, at
        assert found(mem, as_of=at) == expected, at


def test_noop_changes_nothing(mem: Memory, fake_llm: FakeLLMServer) -> None:
    script(fake_llm, facts=["The user likes tea"])
    mem.add_messages("I like tea", user_id="u", wait=True, **FACTS_ONLY)
    script(
        fake_llm,
        facts=["The user likes tea"],
        reconcile=[{"op": "NOOP", "id": "0", "text": "The user likes tea"}],
    )
    again = mem.add_messages("Tea is my thing", user_id="u", wait=True, **FACTS_ONLY)
    assert again.extracted == [] and valid_facts(mem) == ["The user likes tea"]


def test_a_fact_changed_meanwhile_is_reconciled_again(
    mem: Memory, fake_llm: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    script(fake_llm, facts=["The user lives in Osaka"])
    [v1] = mem.add_messages("I live in Osaka", user_id="u", wait=True, **FACTS_ONLY).extracted
    real = steps.reconcile

    def racing(*args: object) -> object:
        ops = real(*args)  # type: ignore[arg-type]
        with mem.store.transaction() as tx:  # another job invalidates the target first
            tx.memories.invalidate_memory(
                Scope(user_id="u"), v1.id, dt_to_ms(v1.valid_from), "other"
            )
        return ops

    monkeypatch.setattr(steps, "reconcile", racing)
    script(
        fake_llm,
        facts=["The user lives in Berlin"],
        reconcile=[{"op": "UPDATE", "id": "0", "text": "The user lives in Berlin"}],
    )
    result = mem.add_messages(
        "I moved to Berlin", user_id="u", wait=True, timeout=0.5, **FACTS_ONLY
    )
    assert result.extraction.state == "pending"  # Conflict: retried, not failed
    assert "step semantic: Conflict" in (result.extraction.reason or "")
    monkeypatch.undo()
    script(fake_llm, facts=["The user lives in Berlin"])  # nothing valid left: a plain ADD
    skip_backoff(mem)
    mem.run_jobs()
    job = mem.store.jobs.get_job(result.extraction.job_id or 0)
    assert job.state is JobState.DONE and valid_facts(mem) == ["The user lives in Berlin"]
