"""``omoide doctor`` asks the LLM for real, and ``omoide --version``."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from omoide._version import __version__
from omoide.cli import app, state
from tests.fakes import FakeLLMServer

Invoke = Callable[..., tuple[int, str, str]]


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Invoke]:
    """``cli(*args, llm=URL)`` on a database in ``tmp_path``, with the LLM at ``URL``."""
    monkeypatch.setenv("OMOIDE_EMBEDDER", "hash")
    monkeypatch.setenv("OMOIDE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("OMOIDE_LLM_MODEL", "fake-model")
    monkeypatch.delenv("API_BASE", raising=False)
    monkeypatch.chdir(tmp_path)

    def invoke(*args: str, llm: str | None = None) -> tuple[int, str, str]:
        state.settings, state.db = None, None
        if llm is None:
            monkeypatch.delenv("OMOIDE_LLM_BASE_URL", raising=False)
        else:
            monkeypatch.setenv("OMOIDE_LLM_BASE_URL", llm)
        result = CliRunner().invoke(app, list(args))
        return result.exit_code, result.stdout, result.stderr

    yield invoke
    state.settings, state.db = None, None


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])  # nothing listens once the socket is closed


def test_doctor_reports_a_reachable_llm_ok(cli: Invoke, fake_llm: FakeLLMServer) -> None:
    code, out, _ = cli("doctor", "--json", llm=fake_llm.url)
    llm = json.loads(out)["llm"]
    assert code == 0, out
    assert llm["status"] == "ok" and llm["checked"] == "GET /models" and "warning" not in llm
    assert fake_llm.requests == []  # the model list costs no completion


def test_doctor_fails_on_an_unreachable_llm(cli: Invoke) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    code, out, _ = cli("doctor", "--json", llm=url)
    llm = json.loads(out)["llm"]
    assert code == 1
    assert llm["status"] == "down" and llm["error"].startswith(f"cannot reach {url}")


def test_doctor_warns_when_the_model_is_not_served(
    cli: Invoke, fake_llm: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OMOIDE_LLM_MODEL", "gpt-unknown")
    code, out, _ = cli("doctor", "--json", llm=fake_llm.url)
    llm = json.loads(out)["llm"]
    assert code == 0 and llm["status"] == "ok" and "'gpt-unknown' is not in" in llm["warning"]


def test_doctor_without_an_llm_says_disabled(cli: Invoke) -> None:
    code, out, _ = cli("doctor", "--json")
    assert code == 0 and json.loads(out)["llm"]["status"] == "disabled"


def test_version(cli: Invoke) -> None:
    code, out, _ = cli("--version")
    assert code == 0 and out.strip() == f"omoide {__version__}"


def test_doctor_tries_a_completion_where_there_is_no_model_list(
    cli: Invoke, fake_llm: FakeLLMServer
) -> None:
    code, out, _ = cli("doctor", "--json", llm=fake_llm.url.removesuffix("/v1") + "/v2")
    llm = json.loads(out)["llm"]
    assert code == 1  # neither route exists under /v2: a wrong base URL is reported down
    assert llm["status"] == "down" and "one-token completion: it failed (HTTP 404)" in llm["error"]
