"""Extraction end to end: a Memory on a real SQLite file, the real OpenAI-compatible client, and
the fake server over real HTTP answering with scripted replies.

Steps call the LLM in a fixed order (``omoide.engine.extraction.steps.STEPS``): variables, facts,
reconcile (only when similar facts are stored), profile, summary, graph. ``script`` enqueues
replies in that order.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from omoide import Memory
from omoide.config import Settings
from omoide.embed import HashEmbedder
from omoide.llm.client import OpenAICompatLLM
from tests import sql
from tests.fakes import FakeLLMServer
from tests.fakes import fixtures as _profiles

# Every test here runs once per server profile (tests/fakes/fixtures.py).
fake_llm = _profiles.fake_llm
llm = _profiles.llm
llm_profile = _profiles.llm_profile
pytest_configure = _profiles.pytest_configure
pytest_generate_tests = _profiles.pytest_generate_tests


CHAT = [
    {"role": "user", "content": "I'm Mei. I live in Shenzhen and my sister Lin works at Acme."},
    {"role": "assistant", "content": "Nice to meet you, Mei!"},
]
GRAPH = {
    "entities": [
        {"name": "Mei", "type": "person"},
        {"name": "Lin", "type": "person"},
        {"name": "Acme", "type": "organization"},
        {"name": "Shenzhen", "type": "place"},
    ],
    "relationships": [
        {"from": "Lin", "to": "Mei", "label": "sister of", "notes": "older sister"},
        {"from": "Lin", "to": "Acme", "label": "works at", "notes": None},
        {"from": "Mei", "to": "Shenzhen", "label": "lives in", "notes": None},
    ],
}


def script(
    fake: FakeLLMServer,
    *,
    variables: dict[str, Any] | None = None,
    facts: list[str] | None = None,
    reconcile: list[dict[str, Any]] | None = None,
    profile: dict[str, str] | None = None,
    summary: str | None = None,
    graph: dict[str, Any] | None = None,
) -> None:
    """Enqueue one reply per step given, in the order the job calls them."""
    if variables is not None:
        values = [{"name": k, "value": v} for k, v in variables.items()]
        fake.enqueue(json.dumps({"values": values}))
    if facts is not None:
        fake.enqueue(json.dumps({"facts": facts}))
    if reconcile is not None:
        fake.enqueue(json.dumps({"operations": reconcile}))
    if profile is not None:
        entries = [{"attribute": k, "value": v} for k, v in profile.items()]
        fake.enqueue(json.dumps({"entries": entries}))
    if summary is not None:
        fake.enqueue(json.dumps({"summary": summary}))
    if graph is not None:
        fake.enqueue(json.dumps(graph))


def skip_backoff(memory: Memory) -> None:
    """Make every pending job due now (what the backoff would do after its wait)."""
    sql.execute(memory.store, "UPDATE jobs SET run_after = 0 WHERE state = 'pending'")


@pytest.fixture
def mem(tmp_path: Path, llm: OpenAICompatLLM) -> Iterator[Memory]:
    """A Memory with an LLM and the HashEmbedder; no worker threads, so ``wait=True`` and
    ``run_jobs()`` run the jobs in the test's thread."""
    with Memory(tmp_path / "omoide.db", embedder=HashEmbedder(), llm=llm, workers=0) as m:
        yield m


@pytest.fixture
def plain(tmp_path: Path) -> Iterator[Memory]:
    """A Memory without an LLM."""
    settings = Settings(llm_base_url=None)
    with Memory(tmp_path / "plain.db", embedder=HashEmbedder(), settings=settings, workers=0) as m:
        assert m.llm is None
        yield m
