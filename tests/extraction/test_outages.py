"""Issue 16, points 4 and 11: an LLM outage longer than every attempt's backoff together does
not fail the job; it waits (minutes, capped, jittered) without using up attempts, keeps what it
got done, and resumes by itself when the LLM answers. A refused request fails at once with a
hint at the configuration; a long step keeps its lease. Driven by calls, never by time:
``run_jobs`` is one worker pass, ``skip_backoff`` makes the wait over."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

import pytest

from omoide import Memory
from omoide.embed import HashEmbedder
from omoide.engine.extraction import service as extraction
from omoide.engine.extraction import steps
from omoide.jobs.kinds import EXTRACT
from omoide.llm.client import OpenAICompatLLM
from omoide.types import JobState
from tests import sql
from tests.extraction.conftest import CHAT, script, skip_backoff
from tests.extraction.test_failures import FACTS_ONLY, only_job, semantic
from tests.fakes import FakeLLMServer
from tests.fakes.profiles import Profile

OUTAGE_PASSES = 8  # more than the 5 attempts meant for bad answers


def outage(fake: FakeLLMServer, profile: Profile) -> AbstractContextManager[None]:
    """The LLM down the way ``profile``'s server is while it restarts or loads a model."""
    if profile.outage == "refused":
        return fake.down()
    fake.outage(calls=OUTAGE_PASSES - 1)  # after the first pass's timeout
    return nullcontext()


def test_an_outage_waits_without_using_up_attempts_and_resumes_by_itself(
    mem: Memory, fake_llm: FakeLLMServer, llm_profile: Profile
) -> None:
    script(fake_llm, facts=["The user is Mei"])  # the semantic step, before the outage
    fake_llm.enqueue_fault("hang")  # the summary step's call times out: the outage begins
    mem.add(CHAT, user_id="u", session_id="s", **{**FACTS_ONLY, "enable_summary_memory": True})
    assert mem.run_jobs() == 1
    assert "timed out" in (only_job(mem).last_error or "")
    waits = []
    with outage(fake_llm, llm_profile):
        for _ in range(OUTAGE_PASSES - 1):
            skip_backoff(mem)
            assert mem.run_jobs() == 1
            job = only_job(mem)
            assert job.state is JobState.PENDING, job.last_error
            assert "LLMUnavailable" in (job.last_error or "") and "step summary" in job.last_error
            waits.append(job.run_after.timestamp() - time.time())
            # what the job got done before the outage stays done, and visible
            assert job.result is not None and job.result["steps"]["semantic"]["status"] == "done"
    policy = EXTRACT.policy
    assert all(0 < w <= policy.max_outage_ms / 1000 for w in waits)
    assert waits[-1] >= policy.max_outage_ms / 2000 - 1  # minutes by now, jittered below the cap
    job = only_job(mem)
    assert job.attempts == OUTAGE_PASSES
    assert job.max_attempts - job.attempts == policy.max_attempts  # not one used up
    script(fake_llm, summary="Mei introduced herself.")
    skip_backoff(mem)  # the backoff's end: the worker takes the job up again by itself
    assert mem.run_jobs() == 1
    job = only_job(mem)
    assert job.state is JobState.DONE and job.result is not None
    assert job.result["outcome"] == "done" and job.result["steps"]["summary"]["status"] == "done"
    assert semantic(mem) == ["The user is Mei"]  # the semantic step did not run twice


@pytest.mark.profiles("llama_server")
def test_http_500_still_uses_up_attempts(mem: Memory, fake_llm: FakeLLMServer) -> None:
    """A 500 may come from the request itself (a model crashing on it): it is bounded."""
    mem.add(CHAT, user_id="u", **FACTS_ONLY)
    fake_llm.enqueue_fault("http_500")
    mem.run_jobs()
    job = only_job(mem)
    assert (job.state, job.attempts, job.max_attempts) == (JobState.PENDING, 1, 5)


@pytest.fixture
def refused(tmp_path: Path, fake_llm: FakeLLMServer) -> Iterator[Memory]:
    """A Memory whose LLM base URL is wrong: the server answers 404 to every request."""
    nowhere = fake_llm.url.removesuffix("/v1") + "/nope"
    llm = OpenAICompatLLM(nowhere, "fake-model", timeout=2, response_format="json_object")
    with llm, Memory(tmp_path / "o.db", embedder=HashEmbedder(), llm=llm, workers=0) as m:
        yield m


@pytest.mark.profiles("generic")
def test_a_refused_request_fails_at_once_with_a_configuration_hint(refused: Memory) -> None:
    result = refused.add_messages(CHAT, user_id="u", wait=True, **FACTS_ONLY)
    job = only_job(refused)
    assert result.extraction.state == "failed" and job.attempts == 1
    assert "LLMRejected" in (job.last_error or "")
    assert "OMOIDE_LLM_BASE_URL" in (job.last_error or "")


@pytest.mark.profiles("generic")
def test_a_long_step_keeps_renewing_its_lease(
    mem: Memory, fake_llm: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(extraction, "RENEW_EVERY_S", 0.01)
    renewed = threading.Event()

    def lease() -> int:
        return int(sql.execute(mem.store, "SELECT lease_until FROM jobs")[0][0])

    def slow_facts(*_args: object, **_kwargs: object) -> list[str]:
        """A step that runs until the lease it started with has been renewed twice."""
        first = lease()
        deadline = time.monotonic() + 30  # a generous bound, not a synchronisation
        seen = {first}
        while len(seen) < 3 and time.monotonic() < deadline:
            seen.add(lease())
        if len(seen) >= 3:
            renewed.set()
        return []

    monkeypatch.setattr(steps, "extract_facts", slow_facts)
    result = mem.add_messages(CHAT, user_id="u", wait=True, **FACTS_ONLY)
    assert renewed.is_set() and result.extraction.state == "done"


@pytest.mark.profiles("generic")
def test_a_job_done_after_retry_job_has_no_old_error(mem: Memory, fake_llm: FakeLLMServer) -> None:
    mem.add(CHAT, user_id="u", **FACTS_ONLY)
    for _ in range(5):
        fake_llm.enqueue_fault("http_500")
        skip_backoff(mem)
        mem.run_jobs()
    assert only_job(mem).state is JobState.FAILED
    mem.retry_job(only_job(mem).id)
    script(fake_llm, facts=["The user is Mei"])
    assert mem.run_jobs() == 1
    job = only_job(mem)
    assert job.state is JobState.DONE and job.last_error is None
