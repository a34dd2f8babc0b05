"""Each example in examples/ runs as a user would run it (a subprocess, its own command line)
against the fake OpenAI-compatible server, and remembers across turns: the second answer's
prompt carries what the first turn stored."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from omoide.embed import HashEmbedder
from tests.api.conftest import running
from tests.fakes import FakeLLMServer

REPO = Path(__file__).parents[2]
REPLIES = ["Nice to meet you! Lisbon is lovely.", "Try a Silver Needle white tea."]


def _run(example: str, home: Path, *args: str) -> str:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
        "HOME": str(home),
        "OMOIDE_DATA_DIR": str(home / ".omoide"),
        "OMOIDE_EMBEDDER": "hash",  # the model-free embedder: these tests are about the flow
        "OMOIDE_LLM_BASE_URL": "",  # omoide itself extracts nothing; only the agent chats
        "API_BASE": "",
    }
    done = subprocess.run(
        [sys.executable, str(REPO / "examples" / example), *args],
        cwd=home,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _check(out: str, fake: FakeLLMServer) -> None:
    for reply in REPLIES:
        assert f"assistant: {reply}" in out
    recalled = [line for line in out.splitlines() if line.startswith("recalled: ")]
    assert len(recalled) == 1 and "jasmine tea" in recalled[0]
    chats = [r for r in fake.requests if r.get("messages")]
    assert len(chats) == 2
    assert "jasmine tea" in chats[1]["messages"][0]["content"]  # remembered from turn one


@pytest.fixture
def fake(fake_llm: FakeLLMServer) -> FakeLLMServer:
    for reply in REPLIES:
        fake_llm.enqueue(reply)
    return fake_llm


def test_library_agent(fake: FakeLLMServer, tmp_path: Path) -> None:
    out = _run("agent_library.py", tmp_path, "--llm-url", fake.url, "--model", "fake-model")
    _check(out, fake)


def test_http_agent(fake: FakeLLMServer, tmp_path: Path) -> None:
    with running(tmp_path / "server.db", HashEmbedder()) as server:
        out = _run("agent_http.py", tmp_path, "--omoide-url", server.url, "--llm-url", fake.url)
    _check(out, fake)


def test_mcp_agent(fake: FakeLLMServer, tmp_path: Path) -> None:
    db = tmp_path / "mcp.db"
    out = _run("agent_mcp.py", tmp_path, "--llm-url", fake.url, "--db", str(db))
    _check(out, fake)
    assert db.exists()


@pytest.mark.parametrize("via", ["library", "http", "mcp"])
def test_agents_sdk_agent(via: str, fake: FakeLLMServer, tmp_path: Path) -> None:
    """The OpenAI Agents SDK example (openai-agents, in the dev extra), over each way in."""
    args = ["--via", via, "--llm-url", fake.url, "--model", "fake-model"]
    if via == "http":
        with running(tmp_path / "server.db", HashEmbedder()) as server:
            out = _run("agents_sdk.py", tmp_path, *args, "--omoide-url", server.url)
    else:
        out = _run("agents_sdk.py", tmp_path, *args, "--db", str(tmp_path / f"{via}.db"))
    _check(out, fake)
