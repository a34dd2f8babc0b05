"""Test doubles that talk real protocols: ``FakeLLMServer`` is an OpenAI-compatible HTTP server.

Use it as a context manager, or through the ``fake_llm`` fixture (``tests/llm/conftest.py``)
which shares one server per session and resets it for every test.
"""

from __future__ import annotations

from tests.fakes.openai_server import FakeLLMServer, hash_vector

__all__ = ["FakeLLMServer", "hash_vector"]
