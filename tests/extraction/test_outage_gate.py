"""Issue 16, point 4 (the probe gate): jobs deferred by an LLM outage resume as soon as the LLM
answers its model list again, not when each one's backoff ends. The deferred job's backoff is
pushed to an hour (a job deep into an outage, past the 5-minute cap) so that only the gate can
bring it back within the bound; every wait is on a job's state."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from omoide import Memory
from omoide.config import Settings
from omoide.embed import HashEmbedder
from omoide.jobs.kinds import EXTRACT
from omoide.llm.client import OpenAICompatLLM
from omoide.types import Job, JobState
from tests import sql
from tests.extraction.conftest import CHAT, script
from tests.extraction.test_failures import FACTS_ONLY, semantic
from tests.fakes import FakeLLMServer

HOUR_MS = 3_600_000


@pytest.fixture
def live(tmp_path: Path, fake_llm: FakeLLMServer) -> Iterator[Memory]:
    """A Memory with a worker thread, as a server runs, probing every 50 ms after an outage."""
    llm = OpenAICompatLLM(fake_llm.url, "fake-model", timeout=5.0)
    settings = Settings(llm_outage_probe_s=0.05, worker_poll_s=0.05)
    with Memory(
        tmp_path / "omoide.db", embedder=HashEmbedder(), llm=llm, settings=settings, workers=1
    ) as memory:
        yield memory
    llm.close()


def _job(memory: Memory, until: Callable[[Job], bool], bound_s: float = 60.0) -> Job:
    deadline = time.monotonic() + bound_s
    while True:
        [job] = memory.list_jobs()
        if until(job):
            return job
        assert time.monotonic() < deadline, job
        time.sleep(0.02)  # polling an observable state, bounded above


def _push_backoff(memory: Memory, job_id: int, ms: int) -> None:
    sql.execute(
        memory.store, "UPDATE jobs SET run_after = run_after + ? WHERE id = ?", (ms, job_id)
    )


@pytest.mark.profiles("generic", "llama_cpp_python")
def test_jobs_deferred_by_an_outage_resume_when_the_llm_is_back(
    live: Memory, fake_llm: FakeLLMServer
) -> None:
    with fake_llm.down():
        live.add(CHAT, user_id="u", session_id="s", **FACTS_ONLY)
        deferred = _job(
            live,
            lambda j: j.state is JobState.PENDING and "LLMUnavailable" in (j.last_error or ""),
        )
        assert "unreachable" in (deferred.last_error or "")
        _push_backoff(live, deferred.id, HOUR_MS)
        script(fake_llm, facts=["The user is Mei"])
    done = _job(live, lambda j: j.state is JobState.DONE)
    assert done.updated_at < deferred.run_after + timedelta(milliseconds=HOUR_MS)
    # the outage's run used up no attempt; the successful one is the first that did
    assert deferred.max_attempts - deferred.attempts == EXTRACT.policy.max_attempts
    assert done.max_attempts - done.attempts == EXTRACT.policy.max_attempts - 1
    assert semantic(live) == ["The user is Mei"]
