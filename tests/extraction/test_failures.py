"""Faults of a real HTTP endpoint: repaired or failed visibly, retried with backoff, never
duplicated by a re-run."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from omoide import EmbedderError, Memory, MemoryType, SearchFilters
from omoide.embed import HashEmbedder
from omoide.engine.extraction import steps
from omoide.jobs.kinds import EXTRACT
from omoide.llm.client import OpenAICompatLLM
from omoide.types import Job, JobState
from tests import sql
from tests.extraction.conftest import CHAT, GRAPH, script, skip_backoff
from tests.fakes import FakeLLMServer

FACTS_ONLY = {
    "enable_user_profile": False,
    "enable_episodic_memory": False,
    "enable_summary_memory": False,
    "enable_graph": False,
}


def only_job(memory: Memory) -> Job:
    [job] = [j for j in memory.list_jobs() if j.kind == "extract"]
    return job


def semantic(memory: Memory, user_id: str = "u") -> list[str]:
    page = memory.get_all(user_id=user_id, filters=SearchFilters(types=[MemoryType.SEMANTIC]))
    return [i.text for i in page.items]


def test_malformed_json_is_repaired(mem: Memory, fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue('{"facts": ["The user is Mei",]')
    fake_llm.enqueue('{"facts": ["The user is Mei"]}')
    result = mem.add_messages(CHAT, user_id="u", wait=True, **FACTS_ONLY)
    assert result.extraction.state == "done" and semantic(mem) == ["The user is Mei"]
    assert mem.token_usage().requests == 2


def test_an_unrepairable_answer_fails_its_step_only_and_the_job_ends_partial(
    mem: Memory, fake_llm: FakeLLMServer
) -> None:
    script(fake_llm, facts=["The user is Mei"])
    fake_llm.enqueue("I cannot help with that.")
    fake_llm.enqueue("Still no JSON, sorry.")
    result = mem.add_messages(
        CHAT, user_id="u", wait=True, **{**FACTS_ONLY, "enable_user_profile": True}
    )
    job = only_job(mem)
    assert result.extraction.state == "partial" and job.state is JobState.DONE
    assert job.attempts == 1  # not retryable: no second attempt
    assert job.result is not None and job.result["outcome"] == "partial"
    assert job.last_error is None
    failed = result.extraction.steps["profile"]
    assert failed["status"] == "failed" and failed == job.result["steps"]["profile"]
    assert "step profile: LLMError" in failed["detail"] and "ProfileResponse" in failed["detail"]
    assert "I cannot help with that." in failed["detail"]
    # the other step did its part, and the failed calls were counted
    assert semantic(mem) == ["The user is Mei"]
    assert job.result["steps"]["semantic"]["status"] == "done"
    assert mem.token_usage().requests == 3
    assert [i.text for i in result.extracted] == ["The user is Mei"]


def test_a_failed_step_does_not_cancel_the_steps_after_it(
    mem: Memory, fake_llm: FakeLLMServer
) -> None:
    """Issue 16, point 3: a bad ``variables`` answer lost the semantic, profile, summary and
    graph steps."""
    fake_llm.enqueue("no json here")
    fake_llm.enqueue("nor here")
    script(
        fake_llm,
        facts=["The user is Mei"],
        profile={"name": "Mei"},
        summary="Mei said hi.",
        graph=GRAPH,
    )
    declared = [{"name": "city", "description": "where the user lives", "type": "string"}]
    result = mem.add_messages(CHAT, user_id="u", session_id="s", mem_variables=declared, wait=True)
    steps_ = result.extraction.steps
    assert result.extraction.state == "partial"
    assert steps_["variables"]["status"] == "failed"
    assert {
        n: steps_[n]["status"] for n in ("episodic", "semantic", "profile", "summary", "graph")
    } == dict.fromkeys(("episodic", "semantic", "profile", "summary", "graph"), "done")
    assert semantic(mem) == ["The user is Mei"] and mem.list_entities(user_id="u")[1] == 4


def test_a_job_whose_every_step_fails_is_failed(mem: Memory, fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue("no json here")
    fake_llm.enqueue("nor here")
    result = mem.add_messages(CHAT, user_id="u", wait=True, **FACTS_ONLY)
    job = only_job(mem)
    assert result.extraction.state == "failed" and job.state is JobState.FAILED
    assert job.result is not None and job.result["outcome"] == "failed"
    assert "step semantic: LLMError" in (job.last_error or "")
    assert result.extraction.reason == job.last_error


def test_http_429_is_retried_with_backoff_then_succeeds(
    mem: Memory, fake_llm: FakeLLMServer
) -> None:
    fake_llm.enqueue_fault("http_429")
    script(fake_llm, facts=["The user is Mei"])
    started = time.monotonic()
    result = mem.add_messages(CHAT, user_id="u", wait=True, timeout=10, **FACTS_ONLY)
    assert result.extraction.state == "done" and semantic(mem) == ["The user is Mei"]
    assert time.monotonic() - started >= 0.9  # waited out the 1 s backoff
    job = only_job(mem)
    assert job.attempts == 2 and "HTTP 429" in (job.last_error or "")


def test_http_500_and_a_hanging_server_are_retried(mem: Memory, fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue_fault("http_500")
    fake_llm.enqueue_fault("hang")  # longer than the client's 1 s timeout
    script(fake_llm, facts=["The user is Mei"])
    mem.add(CHAT, user_id="u", **FACTS_ONLY)
    errors = []
    for _ in range(3):
        skip_backoff(mem)
        mem.run_jobs()
        errors.append(only_job(mem).last_error or "")
    assert "HTTP 500" in errors[0] and "timed out" in errors[1]
    job = only_job(mem)
    assert job.state is JobState.DONE and job.attempts == 3
    assert semantic(mem) == ["The user is Mei"]


def test_retries_run_out_and_the_job_fails_visibly(mem: Memory, fake_llm: FakeLLMServer) -> None:
    mem.add(CHAT, user_id="u", **FACTS_ONLY)
    for _ in range(5):
        fake_llm.enqueue_fault("http_500")
        skip_backoff(mem)
        mem.run_jobs()
    job = only_job(mem)
    assert job.state is JobState.FAILED and job.attempts == 5
    assert "HTTP 500" in (job.last_error or "") and semantic(mem) == []
    assert mem.health()["jobs"]["failed"] == 1


def test_a_pending_retry_is_visible_with_its_backoff(mem: Memory, fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue_fault("malformed")  # a truncated HTTP body: a fault on the way
    result = mem.add_messages(CHAT, user_id="u", wait=True, timeout=0.3, **FACTS_ONLY)
    assert result.extraction.state == "pending"
    assert "malformed response" in (result.extraction.reason or "")
    job = only_job(mem)
    assert job.run_after.timestamp() > time.time()


class Crash(BaseException):
    """The process dies: nothing after this point runs, no except clause sees it."""


def test_a_worker_killed_mid_job_duplicates_nothing(
    mem: Memory, fake_llm: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    script(fake_llm, facts=["The user is Mei"], profile={"name": "Mei"}, summary="Mei said hi.")

    def crash(*args: object) -> None:
        raise Crash

    monkeypatch.setattr(steps, "extract_graph", crash)
    [raw, _] = mem.add(CHAT, user_id="u", session_id="s")
    with pytest.raises(Crash):
        mem.run_jobs()
    assert only_job(mem).state is JobState.RUNNING  # leased by the dead worker
    monkeypatch.undo()
    sql.execute(mem.store, "UPDATE jobs SET lease_until = 0")  # the lease expires
    script(fake_llm, graph=GRAPH)
    assert mem.run_jobs() == 1
    job = only_job(mem)
    assert job.state is JobState.DONE and job.attempts == 2
    assert len(fake_llm.requests) == 4  # every finished step ran once
    counts = {
        t: mem.get_all(user_id="u", filters=SearchFilters(types=[t])).total
        for t in (
            MemoryType.EPISODIC,
            MemoryType.SEMANTIC,
            MemoryType.USER_PROFILE,
            MemoryType.SUMMARY,
        )
    }
    assert set(counts.values()) == {1}
    entities, total = mem.list_entities(user_id="u")
    assert total == 4 and {e.mention_count for e in entities} == {1}
    assert mem.token_usage().requests == 4
    assert raw.source_episodes and entities[0].episodes == raw.source_episodes


def test_a_twin_with_an_expired_lease_writes_nothing_twice(
    mem: Memory, fake_llm: FakeLLMServer
) -> None:
    script(fake_llm, facts=["The user is Mei"], profile={"name": "Mei"}, summary="Hi.", graph=GRAPH)
    mem.add(CHAT, user_id="u", session_id="s")
    [stale] = mem.store.jobs.claim_jobs(10, -1)  # claimed, and its lease already expired
    [twin] = mem.store.jobs.claim_jobs(10, 60_000)  # so another worker takes it
    assert stale.id == twin.id
    mem.engine.services.extraction.run_jobs([(twin, EXTRACT.parse(twin))])
    before = mem.store.admin.stats()
    mem.engine.services.extraction.run_jobs(
        [(stale, EXTRACT.parse(stale))]
    )  # the first worker wakes up and runs it again
    assert mem.store.admin.stats() == before and len(fake_llm.requests) == 4
    assert only_job(mem).state is JobState.DONE
    assert {e.mention_count for e in mem.list_entities(user_id="u")[0]} == {1}


class FlakyEmbedder(HashEmbedder):
    """Down for the extraction's texts, up for everything else."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if any("The user" in t for t in texts):
            raise EmbedderError("embedding service unreachable", retryable=True)
        return super().embed(texts)


def test_embedder_outage_during_extraction_queues_embedding(
    tmp_path: Path, llm: OpenAICompatLLM, fake_llm: FakeLLMServer
) -> None:
    with Memory(tmp_path / "m.db", embedder=FlakyEmbedder(), llm=llm, workers=0) as memory:
        script(fake_llm, facts=["The user is Mei"])
        result = memory.add_messages(CHAT, user_id="u", wait=True, **FACTS_ONLY)
        assert result.extraction.state == "done"
        [fact] = result.extracted
        assert not fact.embedded
        embed_jobs = [j for j in memory.list_jobs() if j.kind == "embed"]
        assert [j.payload["memory_ids"] for j in embed_jobs] == [[fact.id]]
        memory.embedder = HashEmbedder()
        skip_backoff(memory)
        memory.run_jobs()
        assert memory.get(fact.id, user_id="u").embedded
