"""Output budgets and truncation (issue 16, point 2), against every server profile."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from omoide.errors import LLMError
from omoide.extract import extract_facts, extract_graph, summarize
from omoide.llm import LLMTruncated, Usage, kind_of
from omoide.llm.client import DEFAULT_MAX_TOKENS, OpenAICompatLLM
from omoide.llm.prompts.facts import FactsResponse
from omoide.llm.prompts.graph import GraphResponse
from omoide.llm.prompts.summary import SummaryResponse
from omoide.types import Message
from tests.fakes import FakeLLMServer

CHAT = [Message(content="I restore old radios and my brother Piotr lives in Gdynia.")]


class Untagged(BaseModel):
    answer: str


def test_every_request_carries_the_budget_of_its_response_model(
    fake_llm: FakeLLMServer, llm: OpenAICompatLLM
) -> None:
    fake_llm.enqueue('{"facts": []}')
    fake_llm.enqueue('{"entities": []}')
    fake_llm.enqueue('{"summary": "The user restores old radios."}')
    extract_facts(llm, CHAT)
    extract_graph(llm, CHAT)
    summarize(llm, CHAT)
    assert [r["max_tokens"] for r in fake_llm.requests] == [
        FactsResponse.MAX_TOKENS,
        GraphResponse.MAX_TOKENS,
        SummaryResponse.MAX_TOKENS,
    ]
    assert FactsResponse.MAX_TOKENS < GraphResponse.MAX_TOKENS <= 1024


@pytest.mark.profiles("generic")
def test_thinking_tokens_add_and_the_cap_bounds(fake_llm: FakeLLMServer) -> None:
    with OpenAICompatLLM(fake_llm.url, "m", thinking_tokens=300, max_tokens=1000) as llm:
        assert llm.budget(FactsResponse) == FactsResponse.MAX_TOKENS + 300
        assert llm.budget(GraphResponse) == 1000
        assert llm.budget(Untagged) == 1000
    assert DEFAULT_MAX_TOKENS + 300 > 1000


def test_a_runaway_reply_is_a_truncation_error_not_no_json(
    fake_llm: FakeLLMServer, llm: OpenAICompatLLM
) -> None:
    fake_llm.enqueue_runaway('{"summary": "The user', " and then the user")
    with pytest.raises(LLMTruncated, match="max_tokens=768, finish_reason=length") as caught:
        summarize(llm, CHAT)
    error = caught.value
    assert isinstance(error, LLMError) and error.retryable is False
    assert kind_of(error) == "truncated" and error.fields["max_tokens"] == 768
    assert "no JSON" not in error.message
    assert len(fake_llm.requests) == 1, "no repair request: it would run into the same wall"
    usage = error.fields["usage"]
    assert isinstance(usage, Usage) and usage.completion_tokens == 768


def test_a_truncated_list_keeps_its_complete_elements_as_partial(
    fake_llm: FakeLLMServer, llm: OpenAICompatLLM
) -> None:
    fake_llm.enqueue_runaway(
        '{"facts": ["The user restores old radios", "The user', " repairs another radio"
    )
    with pytest.raises(LLMTruncated) as caught:
        extract_facts(llm, CHAT)
    partial = caught.value.fields["partial"]
    assert isinstance(partial, FactsResponse)
    assert partial.facts == ["The user restores old radios"], "the cut element is dropped"


def test_a_reply_within_budget_is_not_truncated(
    fake_llm: FakeLLMServer, llm: OpenAICompatLLM
) -> None:
    fake_llm.enqueue('{"facts": ["The user restores old radios"]}')
    assert extract_facts(llm, CHAT) == ["The user restores old radios"]


def test_a_complete_answer_followed_by_rambling_to_the_budget_is_kept(
    fake_llm: FakeLLMServer, llm: OpenAICompatLLM
) -> None:
    fake_llm.enqueue_runaway('{"facts": ["The user restores old radios"]} Also,', " and more")
    assert extract_facts(llm, CHAT) == ["The user restores old radios"]
    assert len(fake_llm.requests) == 1
