"""Fixtures that run a test once per server profile (imported by the LLM-facing conftests).

A test that takes ``fake_llm`` (or ``llm``, or anything built on them) runs against every real
profile in ``tests.fakes.profiles.REAL``; ``@pytest.mark.profiles("generic")`` narrows it to
the profiles its assertions are about (a test of ``reject_formats`` is about the idealised
server, one reading ``json_schema`` from the request about servers that take it).

``llm`` is a negotiated client: it has made one probe request, as a running deployment has,
so a test sees the requests of its own calls only. Negotiation from cold has its own tests.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from omoide.llm.client import OpenAICompatLLM
from tests.fakes.openai_server import FakeLLMServer
from tests.fakes.profiles import PROFILES, REAL, Profile

JSON_SCHEMA_PROFILES = tuple(p for p in REAL if "json_schema" in PROFILES[p].accepts)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "profiles(*names): the fake server profiles to run with")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "llm_profile" not in metafunc.fixturenames:
        return
    marker = metafunc.definition.get_closest_marker("profiles")
    names = marker.args if marker else REAL
    metafunc.parametrize("llm_profile", names, indirect=True)


@pytest.fixture
def llm_profile(request: pytest.FixtureRequest) -> Profile:
    return PROFILES[request.param]


@pytest.fixture
def fake_llm(_fake_llm_server: FakeLLMServer, llm_profile: Profile) -> FakeLLMServer:
    """The session's fake server, reset, behaving like ``llm_profile``."""
    _fake_llm_server.reset()
    _fake_llm_server.use(llm_profile)
    return _fake_llm_server


@pytest.fixture
def llm(fake_llm: FakeLLMServer) -> Iterator[OpenAICompatLLM]:
    """The real client, negotiated with the profile's server. Its timeout is well below the
    fake's hang (a hang test ends on the client's timeout) and well above what a loaded
    machine takes to answer (a probe timing out under load failed a setup once)."""
    client = OpenAICompatLLM(fake_llm.url, "fake-model", timeout=4.0)
    negotiate(fake_llm, client)
    yield client
    client.close()


def negotiate(fake: FakeLLMServer, client: OpenAICompatLLM) -> None:
    """One probe through the format negotiation, then forget its requests."""
    fake.enqueue('{"ok": true}')
    client.probe()
    fake.requests.clear()
