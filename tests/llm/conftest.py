"""The real LLM client pointed at the session's fake server (``fake_llm`` in tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from omoide.llm.client import OpenAICompatLLM
from omoide.types import Message
from tests.fakes import FakeLLMServer


@pytest.fixture
def llm(fake_llm: FakeLLMServer) -> Iterator[OpenAICompatLLM]:
    """The real client pointed at the fake server, with a short timeout for the hang tests."""
    client = OpenAICompatLLM(fake_llm.url, "fake-model", timeout=1.0)
    yield client
    client.close()


@pytest.fixture
def chat() -> list[Message]:
    return [
        Message(role="user", content="I'm Mei. I live in Shenzhen and I love jasmine tea."),
        Message(role="assistant", content="Nice to meet you, Mei!"),
    ]
