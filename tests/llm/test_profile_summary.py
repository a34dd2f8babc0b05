"""extract_profile and summarize through the real client."""

from __future__ import annotations

import json

import pytest

from omoide.errors import InvalidInput, LLMError
from omoide.extract import ProfileEntry, extract_profile, summarize
from omoide.llm.client import OpenAICompatLLM
from omoide.types import Message
from tests.fakes import FakeLLMServer


def test_profile_entries_are_normalised(
    fake_llm: FakeLLMServer, llm: OpenAICompatLLM, chat: list[Message]
) -> None:
    entries = [
        {"attribute": "Home City", "value": " Shenzhen "},
        {"attribute": "home_city", "value": "shenzhen"},
        {"attribute": "hobby", "value": "tea  tasting"},
        {"attribute": "hobby", "value": "hiking"},
        {"attribute": "mood", "value": ""},
    ]
    fake_llm.enqueue(json.dumps({"entries": entries}))
    result = extract_profile(llm, chat, known=["name: Mei"])
    assert result == [
        ProfileEntry(attribute="home_city", value="Shenzhen"),
        ProfileEntry(attribute="hobby", value="tea tasting"),
        ProfileEntry(attribute="hobby", value="hiking"),
    ]
    assert result[0].text == "home city: Shenzhen"
    assert "<known_profile>" in fake_llm.requests[0]["messages"][1]["content"]


def test_summary_is_cumulative(fake_llm: FakeLLMServer, llm: OpenAICompatLLM) -> None:
    fake_llm.enqueue('{"summary": "Mei is planning a trip to Kyoto in May."}')
    text = summarize(llm, [Message(content="Let's go in May")], previous="Mei plans a Kyoto trip.")
    assert text == "Mei is planning a trip to Kyoto in May."
    sent = fake_llm.requests[0]["messages"]
    assert "<previous_summary>\nMei plans a Kyoto trip.\n</previous_summary>" in sent[1]["content"]
    assert "at most 300 words" in sent[0]["content"]


def test_empty_summary_is_an_error(fake_llm: FakeLLMServer, llm: OpenAICompatLLM) -> None:
    fake_llm.enqueue('{"summary": "  "}')
    with pytest.raises(LLMError, match="empty summary"):
        summarize(llm, [Message(content="hi")], previous="Old summary.")


def test_summary_without_new_text(fake_llm: FakeLLMServer, llm: OpenAICompatLLM) -> None:
    assert summarize(llm, [], previous="Old summary.") == "Old summary."
    with pytest.raises(InvalidInput):
        summarize(llm, [])
    assert fake_llm.requests == []


def test_the_prompts_example_put_before_a_summary_is_cut_off(
    fake_llm: FakeLLMServer, llm: OpenAICompatLLM
) -> None:
    """SmolLM2-135M through llama-cpp-python answered the example, then its own summary."""
    example = "The user is restoring a 1936 typewriter and asked where to find a ribbon; the "
    example += "assistant suggested two repair shops."
    fake_llm.enqueue(json.dumps({"summary": f"{example} Caroline went to a support group."}))
    said = [Message(content="I went to a LGBTQ support group yesterday.")]
    assert summarize(llm, said) == "Caroline went to a support group."
    fake_llm.enqueue(json.dumps({"summary": f"  {example}\n"}))
    with pytest.raises(LLMError, match="example"):
        summarize(llm, said)
    typist = [Message(content=example)]  # a conversation that really says it keeps it
    fake_llm.enqueue(json.dumps({"summary": f"{example} They chatted."}))
    assert summarize(llm, typist) == f"{example} They chatted."
