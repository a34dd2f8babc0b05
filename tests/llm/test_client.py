"""The real OpenAICompatLLM over real HTTP against the fake server."""

from __future__ import annotations

import json
import time

import pytest
from pydantic import BaseModel

from omoide.errors import LLMError
from omoide.llm import MeteredLLM, Usage
from omoide.llm.client import OpenAICompatLLM
from tests.fakes import FakeLLMServer
from tests.fakes.fixtures import JSON_SCHEMA_PROFILES

GOOD = '{"facts": ["The user likes jasmine tea"]}'


class Facts(BaseModel):
    facts: list[str]


def ask(llm: OpenAICompatLLM) -> list[str]:
    return llm.complete_json("Extract facts.", "I like jasmine tea", Facts).value.facts


@pytest.mark.parametrize(
    "reply",
    [
        GOOD,
        f"Sure! Here are the facts:\n{GOOD}\nLet me know if you need more.",
        f"<think>The user said {{tea}}. I should answer in JSON.</think>\n{GOOD}",
        f"I considered it carefully.</think>{GOOD}",
        f"<|im_start|>assistant\n{GOOD}<|im_end|>",
        f"```json\n{GOOD}\n```",
        f"Here you go:\n```\n{GOOD}\n```\nDone.",
        '<think>\n{"facts": ["draft"]</think><|im_start|>assistant\n```json\n' + GOOD + "\n```",
        '["The user likes jasmine tea"]',
    ],
    ids=["plain", "prose", "think", "think-tail", "chatml", "fence", "bare-fence", "all", "list"],
)
def test_wrapped_replies_parse(fake_llm: FakeLLMServer, llm: OpenAICompatLLM, reply: str) -> None:
    fake_llm.enqueue(reply)
    assert ask(llm) == ["The user likes jasmine tea"]
    assert len(fake_llm.requests) == 1


@pytest.mark.profiles(*JSON_SCHEMA_PROFILES)
def test_request_asks_for_json_schema(fake_llm: FakeLLMServer, llm: OpenAICompatLLM) -> None:
    fake_llm.enqueue(GOOD)
    ask(llm)
    body = fake_llm.requests[0]
    assert body["model"] == "fake-model"
    assert body["temperature"] == 0
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"] == Facts.model_json_schema()
    assert [m["role"] for m in body["messages"]] == ["system", "user"]


def test_malformed_json_is_repaired_once(fake_llm: FakeLLMServer, llm: OpenAICompatLLM) -> None:
    fake_llm.enqueue('{"facts": ["The user likes jasmine tea",]')
    fake_llm.enqueue(GOOD)
    done = llm.complete_json("Extract facts.", "I like jasmine tea", Facts)
    assert done.value.facts == ["The user likes jasmine tea"]
    repair = fake_llm.requests[1]["messages"]
    assert repair[2] == {
        "role": "assistant",
        "content": '{"facts": ["The user likes jasmine tea",]',
    }
    assert "could not be used" in repair[3]["content"]
    assert done.usage.requests == 2


def test_schema_mismatch_sends_the_validation_error(
    fake_llm: FakeLLMServer, llm: OpenAICompatLLM
) -> None:
    fake_llm.enqueue('{"facts": "one fact"}')
    fake_llm.enqueue(GOOD)
    assert ask(llm) == ["The user likes jasmine tea"]
    assert "facts: Input should be a valid list" in fake_llm.requests[1]["messages"][3]["content"]


@pytest.mark.parametrize("second", ["still {not json", "", '{"other": 1}'])
def test_failed_repair_raises_with_raw_text(
    fake_llm: FakeLLMServer, llm: OpenAICompatLLM, second: str
) -> None:
    fake_llm.enqueue("I could not find any facts {oops")
    fake_llm.enqueue(second)
    with pytest.raises(LLMError) as caught:
        ask(llm)
    assert caught.value.retryable is False
    assert caught.value.fields["raw"] == "I could not find any facts {oops"
    assert caught.value.fields["repair_raw"] == second
    usage = caught.value.fields["usage"]
    assert isinstance(usage, Usage)
    assert usage.requests == 2
    assert len(fake_llm.requests) == 2


def test_empty_list_is_a_valid_answer_not_a_failure(
    fake_llm: FakeLLMServer, llm: OpenAICompatLLM
) -> None:
    fake_llm.enqueue('{"facts": []}')
    assert ask(llm) == []


@pytest.mark.parametrize("fault", ["http_429", "http_500"])
def test_http_errors_are_retryable(
    fake_llm: FakeLLMServer, llm: OpenAICompatLLM, fault: str
) -> None:
    fake_llm.enqueue_fault(fault)  # type: ignore[arg-type]
    with pytest.raises(LLMError) as caught:
        ask(llm)
    assert caught.value.retryable is True
    assert caught.value.fields["status"] == int(fault[-3:])
    assert len(fake_llm.requests) == 1, "no retry inside the request path"


def test_hanging_server_times_out_retryable(fake_llm: FakeLLMServer, llm: OpenAICompatLLM) -> None:
    fake_llm.enqueue_fault("hang")
    started = time.monotonic()
    with pytest.raises(LLMError, match="timed out") as caught:
        ask(llm)
    assert caught.value.retryable is True
    # gave up on its own timeout, well before the server's hang would have ended
    assert time.monotonic() - started < fake_llm.hang_seconds * 0.8


@pytest.mark.parametrize("fault", ["malformed", "malformed_shape"])
def test_malformed_response_body_is_retryable(
    fake_llm: FakeLLMServer, llm: OpenAICompatLLM, fault: str
) -> None:
    fake_llm.enqueue_fault(fault)  # type: ignore[arg-type]
    with pytest.raises(LLMError, match="malformed") as caught:
        ask(llm)
    assert caught.value.retryable is True
    assert len(fake_llm.requests) == 1


def test_unreachable_server_is_retryable(fake_llm: FakeLLMServer) -> None:
    llm = OpenAICompatLLM("http://127.0.0.1:9/v1", "fake-model", timeout=1.0)
    with llm, pytest.raises(LLMError, match="unreachable") as caught:
        ask(llm)
    assert caught.value.retryable is True


def test_client_errors_are_not_retryable(fake_llm: FakeLLMServer) -> None:
    llm = OpenAICompatLLM(fake_llm.url.removesuffix("/v1") + "/nope", "fake-model", timeout=1.0)
    with llm, pytest.raises(LLMError) as caught:
        ask(llm)
    assert caught.value.retryable is False
    assert caught.value.fields["status"] == 404


@pytest.mark.profiles("generic")
def test_json_schema_unsupported_falls_back(fake_llm: FakeLLMServer, llm: OpenAICompatLLM) -> None:
    fake_llm.reject_formats = {"json_schema"}
    fake_llm.enqueue(GOOD)
    fake_llm.enqueue(GOOD)
    assert ask(llm) == ["The user likes jasmine tea"]
    assert ask(llm) == ["The user likes jasmine tea"]
    formats = [r.get("response_format", {}).get("type") for r in fake_llm.requests]
    assert formats == ["json_schema", "json_object", "json_object"], "the downgrade sticks"
    assert fake_llm.requests[1]["response_format"]["schema"] == Facts.model_json_schema()
    # Issue 16, point 6: a filled example object, not the raw JSON Schema small models echo.
    system = fake_llm.requests[1]["messages"][0]["content"]
    assert '{"facts": ["facts text"]}' in system
    assert json.dumps(Facts.model_json_schema(), separators=(",", ":")) not in system


@pytest.mark.profiles("generic")
def test_no_structured_output_at_all_falls_back_to_prompting(
    fake_llm: FakeLLMServer, llm: OpenAICompatLLM
) -> None:
    fake_llm.reject_formats = {"json_schema", "json_object"}
    fake_llm.enqueue(f"Here is the JSON:\n```json\n{GOOD}\n```")
    assert ask(llm) == ["The user likes jasmine tea"]
    assert "response_format" not in fake_llm.requests[-1]
    assert llm.response_format == "prompt"


def test_token_usage_is_reported(fake_llm: FakeLLMServer, llm: OpenAICompatLLM) -> None:
    fake_llm.enqueue(GOOD, prompt_tokens=120, completion_tokens=9)
    done = llm.complete_json("Extract facts.", "I like jasmine tea", Facts)
    assert done.usage == Usage(prompt_tokens=120, completion_tokens=9, requests=1)
    assert done.usage.total_tokens == 129
    assert done.raw == GOOD
    assert done.model == "fake-model"


def test_metered_llm_sums_usage_including_failures(
    fake_llm: FakeLLMServer, llm: OpenAICompatLLM
) -> None:
    metered = MeteredLLM(llm)
    fake_llm.enqueue(GOOD, prompt_tokens=100, completion_tokens=10)
    fake_llm.enqueue("no json", prompt_tokens=50, completion_tokens=2)
    fake_llm.enqueue("still none", prompt_tokens=60, completion_tokens=2)
    metered.complete_json("s", "u", Facts)
    with pytest.raises(LLMError):
        metered.complete_json("s", "u", Facts)
    assert metered.usage == Usage(prompt_tokens=210, completion_tokens=14, requests=3)
    assert metered.usage.as_dict()["total_tokens"] == 224


def test_outage_during_repair_keeps_first_usage(
    fake_llm: FakeLLMServer, llm: OpenAICompatLLM
) -> None:
    fake_llm.enqueue("no json", prompt_tokens=50, completion_tokens=2)
    fake_llm.enqueue_fault("http_500")
    with pytest.raises(LLMError) as caught:
        ask(llm)
    assert caught.value.retryable is True
    assert caught.value.fields["usage"] == Usage(50, 2, 1)
