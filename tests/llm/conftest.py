"""The real LLM client pointed at the session's fake server, once per server profile
(``tests/fakes/fixtures.py``)."""

from __future__ import annotations

import pytest

from omoide.types import Message
from tests.fakes import fixtures as _profiles

# Every test here runs once per server profile (tests/fakes/fixtures.py).
fake_llm = _profiles.fake_llm
llm = _profiles.llm
llm_profile = _profiles.llm_profile
pytest_configure = _profiles.pytest_configure
pytest_generate_tests = _profiles.pytest_generate_tests


@pytest.fixture
def chat() -> list[Message]:
    return [
        Message(role="user", content="I'm Mei. I live in Shenzhen and I love jasmine tea."),
        Message(role="assistant", content="Nice to meet you, Mei!"),
    ]
