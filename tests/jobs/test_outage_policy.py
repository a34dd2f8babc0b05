"""The outage branch of the retry policy: minutes, capped, jittered, no attempt used."""

from __future__ import annotations

from omoide.errors import LLMError
from omoide.jobs.policy import RetryPolicy
from omoide.llm import LLMRejected, LLMUnavailable


def test_an_outage_waits_longer_each_run_up_to_the_cap_and_uses_no_attempt() -> None:
    policy = RetryPolicy()
    for reason in ("unreachable", "timeout", "rate_limited", "overloaded"):
        decision = policy.decide(LLMUnavailable("down", reason=reason), 1)
        assert decision.retry and not decision.uses_attempt
        assert 2_500 <= decision.delay_ms <= 5_000
    waits = [policy.decide(LLMUnavailable("down", reason="unreachable"), n) for n in (4, 7, 60)]
    assert 20_000 <= waits[0].delay_ms <= 40_000
    assert all(150_000 <= w.delay_ms <= 300_000 for w in waits[1:])  # capped at 5 minutes
    jittered = {policy.outage_backoff_ms(10) for _ in range(20)}
    assert len(jittered) > 1, "jobs stopped by one outage do not come back in the same second"


def test_answers_and_server_errors_still_use_attempts_and_rejections_fail() -> None:
    policy = RetryPolicy()
    server_error = policy.decide(LLMUnavailable("HTTP 500", reason="server_error"), 1)
    assert server_error.retry and server_error.uses_attempt
    assert policy.decide(LLMError("a retryable LLMError of another LLM"), 1).uses_attempt
    assert not policy.decide(LLMRejected("HTTP 404"), 1).retry
