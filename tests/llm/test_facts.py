"""extract_facts and reconcile through the real client and the fake server."""

from __future__ import annotations

import json

import pytest

from omoide.errors import InvalidInput, LLMError
from omoide.extract import FactOp, extract_facts, reconcile
from omoide.llm import MeteredLLM, Usage
from omoide.llm.client import OpenAICompatLLM
from omoide.llm.prompts import facts as facts_prompt
from omoide.types import Message
from tests.fakes import FakeLLMServer

EXISTING = [("mem_a", "The user lives in Osaka"), ("mem_b", "The user has a dog")]


def ops_reply(*ops: dict[str, object]) -> str:
    return json.dumps({"operations": list(ops)})


def test_extract_facts_cleans_and_dedupes(
    fake_llm: FakeLLMServer, llm: OpenAICompatLLM, chat: list[Message]
) -> None:
    fake_llm.enqueue(
        '{"facts": ["The user is  Mei", " ", "The user lives in Shenzhen", "The user is Mei"]}'
    )
    assert extract_facts(llm, chat, today="2025-05-01") == [
        "The user is Mei",
        "The user lives in Shenzhen",
    ]
    user = fake_llm.requests[0]["messages"][1]["content"]
    assert "Today's date is 2025-05-01." in user
    assert "user: I'm Mei. I live in Shenzhen" in user


def test_extract_facts_parse_failure_is_an_error_not_empty(
    fake_llm: FakeLLMServer, llm: OpenAICompatLLM, chat: list[Message]
) -> None:
    fake_llm.enqueue("The user likes tea.")
    fake_llm.enqueue("Sorry, the user likes tea.")
    with pytest.raises(LLMError) as caught:
        extract_facts(llm, chat)
    assert caught.value.retryable is False


def test_extract_facts_without_text_makes_no_call(
    fake_llm: FakeLLMServer, llm: OpenAICompatLLM
) -> None:
    assert extract_facts(llm, [Message(content="  ")]) == []
    assert fake_llm.requests == []


def test_prompt_is_versioned_and_pure() -> None:
    prompt = facts_prompt.build([Message(content="hi")])
    assert prompt.version == facts_prompt.PROMPT_VERSION == "facts/2"
    assert prompt.schema is facts_prompt.FactsResponse
    assert "<conversation>\nuser: hi\n</conversation>" in prompt.user


def test_reconcile_maps_aliases_back_to_real_ids(
    fake_llm: FakeLLMServer, llm: OpenAICompatLLM
) -> None:
    fake_llm.enqueue(
        ops_reply(
            {"op": "UPDATE", "id": "0", "text": "The user lives in Berlin"},
            {"op": "DELETE", "id": 1, "text": "The user gave the dog away"},
            {"op": "ADD", "id": None, "text": "The user likes  jasmine tea"},
            {"op": "NOOP", "id": None, "text": "The user is Mei"},
        )
    )
    facts = ["The user lives in Berlin", "The user gave the dog away", "The user likes jasmine tea"]
    assert reconcile(llm, facts, EXISTING) == [
        FactOp(op="UPDATE", text="The user lives in Berlin", target_id="mem_a"),
        FactOp(op="DELETE", text="The user gave the dog away", target_id="mem_b"),
        FactOp(op="ADD", text="The user likes jasmine tea"),
        FactOp(op="NOOP", text="The user is Mei"),
    ]
    user = fake_llm.requests[0]["messages"][1]["content"]
    assert '"id": "0"' in user
    assert "mem_a" not in user, "the model sees short aliases only"


@pytest.mark.parametrize(
    "op",
    [
        {"op": "UPDATE", "id": "7", "text": "The user lives in Berlin"},
        {"op": "DELETE", "id": "mem_a", "text": ""},
        {"op": "NOOP", "id": "42", "text": ""},
    ],
    ids=["update", "delete-real-id", "noop"],
)
def test_reconcile_rejects_hallucinated_ids(
    fake_llm: FakeLLMServer, llm: OpenAICompatLLM, op: dict[str, object]
) -> None:
    fake_llm.enqueue(ops_reply(op))
    with pytest.raises(LLMError, match="was not offered") as caught:
        reconcile(llm, ["The user lives in Berlin"], EXISTING)
    assert caught.value.retryable is False
    assert caught.value.fields["raw"] == ops_reply(op)


@pytest.mark.parametrize(
    ("ops", "reason"),
    [
        ([{"op": "UPDATE", "id": None, "text": "x"}], "UPDATE without an id"),
        ([{"op": "UPDATE", "id": "0", "text": " "}], "without text"),
        ([{"op": "ADD", "text": ""}], "ADD without text"),
        (
            [{"op": "UPDATE", "id": "0", "text": "a"}, {"op": "DELETE", "id": "0", "text": "b"}],
            "several changes",
        ),
    ],
)
def test_reconcile_rejects_incoherent_operations(
    fake_llm: FakeLLMServer, llm: OpenAICompatLLM, ops: list[dict[str, object]], reason: str
) -> None:
    fake_llm.enqueue(ops_reply(*ops))
    with pytest.raises(LLMError, match=reason):
        reconcile(llm, ["The user lives in Berlin"], EXISTING)


def test_reconcile_unknown_op_goes_through_repair(
    fake_llm: FakeLLMServer, llm: OpenAICompatLLM
) -> None:
    fake_llm.enqueue(ops_reply({"op": "MERGE", "id": "0", "text": "x"}))
    fake_llm.enqueue(ops_reply({"op": "NOOP", "id": "0", "text": "x"}))
    assert reconcile(llm, ["x"], EXISTING) == [FactOp(op="NOOP", text="x", target_id="mem_a")]
    assert "op: Input should be" in fake_llm.requests[1]["messages"][3]["content"]


def test_reconcile_with_nothing_stored_adds_without_a_call(
    fake_llm: FakeLLMServer, llm: OpenAICompatLLM
) -> None:
    assert reconcile(llm, ["a", "a", "b"], []) == [
        FactOp(op="ADD", text="a"),
        FactOp(op="ADD", text="b"),
    ]
    assert reconcile(llm, [" "], EXISTING) == []
    assert fake_llm.requests == []


def test_reconcile_refuses_duplicate_existing_ids(llm: OpenAICompatLLM) -> None:
    with pytest.raises(InvalidInput):
        reconcile(llm, ["x"], [("mem_a", "one"), ("mem_a", "two")])


def test_a_job_meters_every_call_it_makes(
    fake_llm: FakeLLMServer, llm: OpenAICompatLLM, chat: list[Message]
) -> None:
    fake_llm.enqueue('{"facts": ["The user lives in Berlin"]}', 300, 8)
    fake_llm.enqueue(
        ops_reply({"op": "UPDATE", "id": "0", "text": "The user lives in Berlin"}), 200, 20
    )
    metered = MeteredLLM(llm)
    ops = reconcile(metered, extract_facts(metered, chat), EXISTING)
    assert ops[0].target_id == "mem_a"
    assert metered.usage == Usage(prompt_tokens=500, completion_tokens=28, requests=2)
