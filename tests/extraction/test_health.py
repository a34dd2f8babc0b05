"""Issue 16, point 11: ``health()`` (``/health``) reports the LLM from a real call, cached
briefly, never "ok" just because one is configured."""

from __future__ import annotations

from omoide import Memory
from omoide.engine.llm_health import TTL_S, LLMHealth
from omoide.llm.client import OpenAICompatLLM
from tests.fakes import FakeLLMServer
from tests.fakes.profiles import Profile

OK = '{"ok": true}'


def test_health_asks_the_llm_and_caches_the_answer(mem: Memory, fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue(OK)
    report = mem.health()["llm"]
    assert report["status"] == "ok" and report["model"] == "openai-compat/fake-model"
    assert len(fake_llm.requests) == 1  # a real call
    assert mem.health()["llm"]["status"] == "ok" and len(fake_llm.requests) == 1  # cached


def test_an_llm_that_cannot_answer_is_not_ok(
    llm: OpenAICompatLLM, fake_llm: FakeLLMServer, llm_profile: Profile
) -> None:
    now = [0.0]
    health = LLMHealth(llm, clock=lambda: now[0])
    if llm_profile.outage == "refused":
        with fake_llm.down():
            down = health.report()
    else:
        fake_llm.outage(calls=1)
        down = health.report()
    assert down["status"] == "down" and down["kind"] == "unavailable", down
    fake_llm.enqueue(OK)
    assert health.report()["status"] == "down"  # still the cached answer
    now[0] += TTL_S
    back = health.report()
    assert back["status"] == "ok" and back["checked_s_ago"] == 0
    fake_llm.enqueue("no json")
    fake_llm.enqueue("still none")
    now[0] += TTL_S
    bad = health.report()
    assert bad["status"] == "error" and bad["kind"] == "bad_answer"
