"""Structured-output negotiation from a cold client, against each server profile (issue 16, 1)."""

from __future__ import annotations

import dataclasses

import pytest
from pydantic import BaseModel

from omoide.config import Settings
from omoide.llm import LLMRejected, build_llm
from omoide.llm.client import OpenAICompatLLM
from omoide.llm.formats import FormatMemory, rejects_format
from tests.fakes import FakeLLMServer
from tests.fakes.profiles import Profile, form_of

GOOD = '{"facts": ["The user likes jasmine tea"]}'


class Facts(BaseModel):
    facts: list[str]


def ask(llm: OpenAICompatLLM) -> list[str]:
    return llm.complete_json("Extract facts as JSON.", "I like jasmine tea", Facts).value.facts


def forms(fake: FakeLLMServer) -> list[str]:
    return [form_of(r)[0] for r in fake.requests]


# What a cold client sends to each server until one answers, per the profiles' sources.
EXPECTED = {
    "openai": ["json_schema"],
    "llama_cpp_python": ["json_schema", "json_object_schema"],
    "llama_server": ["json_schema"],
    "ollama": ["json_schema"],
    "vllm": ["json_schema"],
}


def test_a_cold_client_finds_the_form_and_remembers_it(
    fake_llm: FakeLLMServer, llm_profile: Profile
) -> None:
    memory = FormatMemory()
    fake_llm.enqueue(GOOD)
    fake_llm.enqueue(GOOD)
    with OpenAICompatLLM(fake_llm.url, "fake-model", timeout=2, formats=memory) as first:
        assert ask(first) == ["The user likes jasmine tea"]
    # a new client of the same endpoint (base_url + model) starts where the first one ended
    with OpenAICompatLLM(fake_llm.url, "fake-model", timeout=2, formats=memory) as second:
        assert ask(second) == ["The user likes jasmine tea"]
        assert second.response_format == EXPECTED[llm_profile.name][-1]
    assert forms(fake_llm) == [*EXPECTED[llm_profile.name], EXPECTED[llm_profile.name][-1]]
    assert memory.confirmed((fake_llm.url, "fake-model")) == EXPECTED[llm_profile.name][-1]


@pytest.mark.profiles("llama_cpp_python")
def test_llama_cpp_python_gets_its_schema_form_after_the_500(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue(GOOD)
    with OpenAICompatLLM(fake_llm.url, "fake-model", timeout=2) as llm:
        assert ask(llm) == ["The user likes jasmine tea"]
    sent = fake_llm.requests[-1]
    assert sent["response_format"] == {"type": "json_object", "schema": Facts.model_json_schema()}
    system = sent["messages"][0]["content"]
    assert '{"facts": ["facts text"]}' in system, "a filled example, for a model that strays"
    assert '"properties"' not in system, "not the raw schema"


@pytest.mark.profiles("generic")
def test_every_form_refused_ends_in_prompting_and_other_models_are_separate(
    fake_llm: FakeLLMServer,
) -> None:
    memory = FormatMemory()
    fake_llm.reject_formats = {"json_schema", "json_object"}
    fake_llm.enqueue(GOOD)
    with OpenAICompatLLM(fake_llm.url, "model-a", timeout=2, formats=memory) as llm:
        assert ask(llm) == ["The user likes jasmine tea"]
    assert forms(fake_llm) == ["json_schema", "json_object_schema", "json_object", "prompt"]
    assert memory.current((fake_llm.url, "model-a")) == "prompt"
    assert memory.current((fake_llm.url, "model-b")) == "json_schema"


@pytest.mark.parametrize(
    ("status", "body", "rejection"),
    [
        (500, "Input should be 'text' or 'json_object' ('body', 'response_format', 'type')", True),
        (422, '{"detail": [{"loc": ["body", "response_format"], "msg": "bad"}]}', True),
        (500, 'response_format type must be one of "text" or "json_object", but got: json_schema'
         , True),
        (400, "'messages' must contain the word 'json' ... 'response_format' of type ...", True),
        (500, "CUDA out of memory", False),
        (503, '{"error": {"message": "Loading model"}} response_format', False),
        (429, "response_format rate limit", False),
        (400, "This model's maximum context length is 2048 tokens", False),
    ],
    ids=["llama-cpp-python", "fastapi-422", "old-llama-server", "openai-json-word", "oom",
         "loading", "rate-limit", "context"],
)  # fmt: skip
def test_a_rejection_is_recognised_by_its_body_whatever_the_status(
    status: int, body: str, rejection: bool
) -> None:
    assert rejects_format(status, body) is rejection


@pytest.mark.profiles("openai")
def test_a_forced_form_is_used_as_is_and_a_refusal_is_a_clear_error(
    fake_llm: FakeLLMServer,
) -> None:
    fake_llm.enqueue(GOOD)
    with OpenAICompatLLM(fake_llm.url, "m", timeout=2, response_format="json_object") as llm:
        assert ask(llm) == ["The user likes jasmine tea"]
    assert forms(fake_llm) == ["json_object"]
    forced = OpenAICompatLLM(fake_llm.url, "m", timeout=2, response_format="json_object_schema")
    with forced, pytest.raises(LLMRejected, match="forced by OMOIDE_LLM_RESPONSE_FORMAT") as caught:
        ask(forced)
    assert caught.value.retryable is False and caught.value.fields["status"] == 400
    assert forms(fake_llm) == ["json_object", "json_object_schema"], "no fallback when forced"


@pytest.mark.profiles("generic")
def test_settings_choose_the_form_and_the_budget(
    fake_llm: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OMOIDE_LLM_RESPONSE_FORMAT", "prompt")
    monkeypatch.setenv("OMOIDE_LLM_MAX_TOKENS", "100")
    settings = Settings(llm_base_url=fake_llm.url, llm_model="fake-model")
    llm = build_llm(settings)
    assert llm is not None
    with llm:
        fake_llm.enqueue(GOOD)
        assert ask(llm) == ["The user likes jasmine tea"]
    assert "response_format" not in fake_llm.requests[0]
    assert fake_llm.requests[0]["max_tokens"] == 100
    with pytest.raises(ValueError, match="json_schema"):
        Settings(llm_response_format="grammar")  # type: ignore[arg-type,call-arg]


@pytest.mark.profiles("openai")
def test_a_reasoning_model_gets_max_completion_tokens(
    fake_llm: FakeLLMServer, llm_profile: Profile
) -> None:
    fake_llm.use(dataclasses.replace(llm_profile, completion_tokens_only=True))
    memory = FormatMemory()
    fake_llm.enqueue(GOOD)
    fake_llm.enqueue(GOOD)
    for _ in range(2):
        with OpenAICompatLLM(fake_llm.url, "o3-mini", timeout=2, formats=memory) as llm:
            assert ask(llm) == ["The user likes jasmine tea"]
    budgets = [(r.get("max_tokens"), r.get("max_completion_tokens")) for r in fake_llm.requests]
    assert budgets == [(1024, None), (None, 1024), (None, 1024)], "refused once, then remembered"
    assert forms(fake_llm) == ["json_schema"] * 3
