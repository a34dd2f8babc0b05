"""Outages as each server shows them: LLMUnavailable, told apart from bad answers, and over
when the server is back (issue 16, point 4 on the client side). Driven by calls, not time."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, nullcontext

import pytest
from pydantic import BaseModel

from omoide.errors import LLMError
from omoide.llm import LLMRejected, LLMUnavailable, kind_of
from omoide.llm.client import OpenAICompatLLM
from tests.fakes import FakeLLMServer
from tests.fakes.profiles import Profile


class Answer(BaseModel):
    answer: str


def ask(llm: OpenAICompatLLM) -> str:
    return llm.complete_json("Answer in JSON.", "Say ok", Answer).value.answer


@pytest.fixture
def own_server(llm_profile: Profile) -> Iterator[FakeLLMServer]:
    """A server of the test's own: taking it down must not disturb the session's."""
    with FakeLLMServer(profile=llm_profile, hang_seconds=1.0) as server:
        yield server


def outage(server: FakeLLMServer, profile: Profile) -> AbstractContextManager[None]:
    """One failed call the way ``profile``'s server fails while it restarts or loads."""
    if profile.outage == "refused":
        return server.down()
    server.outage(calls=1)
    return nullcontext()


def test_an_outage_is_unavailable_and_ends_when_the_server_is_back(
    own_server: FakeLLMServer, llm_profile: Profile
) -> None:
    with OpenAICompatLLM(own_server.url, "fake-model", timeout=2) as llm:
        with outage(own_server, llm_profile), pytest.raises(LLMUnavailable) as caught:
            ask(llm)
        error = caught.value
        assert error.retryable is True and kind_of(error) == "unavailable"
        expected = "unreachable" if llm_profile.outage == "refused" else "overloaded"
        assert error.reason == expected
        own_server.enqueue('{"answer": "ok"}')
        assert ask(llm) == "ok", "the same client works again, nothing to reset"
    assert llm.response_format != "prompt", "an outage is not a format rejection"


@pytest.mark.profiles("llama_server", "openai")
def test_an_outage_of_several_calls_is_counted_by_calls(own_server: FakeLLMServer) -> None:
    own_server.outage(calls=3)
    own_server.enqueue('{"answer": "ok"}')
    with OpenAICompatLLM(own_server.url, "fake-model", timeout=2) as llm:
        for _ in range(3):
            with pytest.raises(LLMUnavailable, match="HTTP 503"):
                ask(llm)
        assert ask(llm) == "ok"
    assert len(own_server.requests) == 4


@pytest.mark.profiles("generic")
def test_kinds_tell_outages_from_answers_and_configuration(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue("no json")
    fake_llm.enqueue("still none")
    llm = OpenAICompatLLM(fake_llm.url, "fake-model", timeout=2)
    with llm, pytest.raises(LLMError) as bad:
        ask(llm)
    assert kind_of(bad.value) == "bad_answer" and type(bad.value) is LLMError
    nowhere = fake_llm.url.removesuffix("/v1") + "/nope"
    lost = OpenAICompatLLM(nowhere, "fake-model", timeout=2)
    with lost, pytest.raises(LLMRejected) as rejected:
        ask(lost)
    assert kind_of(rejected.value) == "rejected" and rejected.value.fields["status"] == 404
    foreign = LLMError("from another LLM implementation", retryable=True)
    assert kind_of(foreign) == "unavailable"
