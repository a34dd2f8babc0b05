"""The real LLM client pointed at the session's fake server (``fake_llm`` in tests/conftest.py)."""

from __future__ import annotations

import pytest

from omoide.types import Message


@pytest.fixture
def chat() -> list[Message]:
    return [
        Message(role="user", content="I'm Mei. I live in Shenzhen and I love jasmine tea."),
        Message(role="assistant", content="Nice to meet you, Mei!"),
    ]
