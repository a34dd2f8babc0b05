"""Documentation stays true: every code block of README.md and docs/ runs, the configuration
page is what the code generates, every CLI command is documented, the public API is exact.

A block runs according to its info string:

- ``python``: a fresh interpreter, in an empty working directory and ``HOME``;
- ``sh`` / ``bash``: bash with ``-e``, the venv's ``omoide`` on ``PATH``;
- ``console``: each ``$ command`` runs in turn (one ``HOME`` for the block), and its output must
  read as shown, where ``<id>`` stands for any memory id, ``/home/you`` for the home directory
  and a line ``...`` for any lines; a command whose comment says ``exit code N`` must exit N;
- ``json``: parses; ``env``: ``KEY=value`` lines that omoide's settings accept.

``http://127.0.0.1:8000`` in a block means a server that the test starts (``omoide serve``, no
key, on a free port), as ``make run`` would leave it. A block that cannot run here (it needs an
LLM, Docker, a client program, or serves until stopped) is preceded by
``<!-- not run: <why> -->``; the reason is required. A shell block that installs or builds
something (pip, npm, apt-get, docker, make run) must be marked: it would change the shared venv.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

import omoide
from omoide.cli import app
from tests.fakes import FakeLLMServer
from tools import config_reference

ROOT = Path(__file__).parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
README = (ROOT / "README.md").read_text()
BIN = Path(sys.executable).parent
NOT_RUN = re.compile(r"<!-- not run: (.+?) -->")
MEMORY_ID = re.compile(r"\b[0-9a-f]{32}\b")
# A block that installs or builds something never runs here: it would change the shared venv.
INSTALLS = re.compile(r"\b(?:pip install|npm (?:ci|install)|apt-get|docker|make (?:run|install))\b")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    info: str
    text: str
    skip: str | None

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def _blocks(page: Path) -> Iterator[Block]:
    lines = page.read_text().splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("```"):
            start, info = i, lines[i][3:].strip()
            end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
            before = lines[start - 1] if start else ""
            skip = NOT_RUN.search(before)
            text = "\n".join(lines[start + 1 : end]) + "\n"
            yield Block(page, start + 1, info, text, skip.group(1) if skip else None)
            i = end
        i += 1


BLOCKS = [block for page in PAGES for block in _blocks(page)]
RUNNABLE = [b for b in BLOCKS if b.skip is None]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env(home: Path, models: Path) -> dict[str, str]:
    (home / ".omoide").mkdir(parents=True, exist_ok=True)
    link = home / ".omoide" / "models"
    if not link.exists():
        link.symlink_to(models)  # the model is prepared once for every block
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMOIDE_", "MEMORY_"))}
    env.update(
        HOME=str(home),
        PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}",
        PYTHONPATH=str(ROOT),
        OMOIDE_WORD_TABLE_BUILD="false",
        COLUMNS="200",
    )
    return env


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, models: Path) -> Iterator[str]:
    """``omoide serve`` as ``make run`` leaves it: loopback, no key, the real model."""
    home = tmp_path_factory.mktemp("server-home")
    port = _free_port()
    process = subprocess.Popen(
        [str(BIN / "omoide"), "serve", "--port", str(port)],
        env=_env(home, models),
        cwd=home,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert process.poll() is None, "omoide serve exited"
            time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=110)


def _expected(output: str) -> re.Pattern[str]:
    parts = [
        r"(?:.*\n)*?" if line.strip() == "..." else re.escape(line.rstrip()) + r"\n"
        for line in output.splitlines()
    ]
    return re.compile("".join(parts) + r"\Z")


def _normal(output: str, home: Path) -> str:
    output = MEMORY_ID.sub("<id>".ljust(32), output).replace(str(home), "/home/you")
    return "".join(line.rstrip() + "\n" for line in output.splitlines())


def _console(block: Block, cwd: Path, env: dict[str, str]) -> None:
    steps = re.split(r"^\$ ", block.text, flags=re.MULTILINE)[1:]
    for step in steps:
        command, _, output = step.partition("\n")
        wanted = re.search(r"exit code (\d+)", command)
        done = _run(["bash", "-c", command], cwd, env)
        assert done.returncode == int(wanted.group(1) if wanted else 0), (command, done.stderr)
        actual = _normal(done.stdout, cwd)
        assert _expected(output).match(actual), f"{command}\n--- shown:\n{output}--- got:\n{actual}"


# A recipe's port names the server it is for; the fake server then answers as that one does.
PROFILES = {"8080": "llama_server", "11434": "ollama"}


def _env_recipe(text: str, cwd: Path, env: dict[str, str]) -> None:
    """The lines go in ./.env, as the page says; ``omoide doctor`` must then reach the LLM."""
    url = re.search(r"^OMOIDE_LLM_BASE_URL=(http://[^/]+:(\d+)/v1)$", text, re.MULTILINE)
    assert url, "a recipe names OMOIDE_LLM_BASE_URL"
    with FakeLLMServer(profile=PROFILES[url.group(2)]) as llm:
        (cwd / ".env").write_text(text.replace(url.group(1), llm.url))
        done = _run([str(BIN / "omoide"), "doctor"], cwd, env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^llm\s+ok\b", done.stdout, re.MULTILINE), done.stdout


@pytest.mark.slow
@pytest.mark.parametrize("block", RUNNABLE, ids=lambda b: b.name)
def test_every_block_runs(block: Block, tmp_path: Path, models: Path, server: str) -> None:
    env = _env(tmp_path, models)
    text = block.text.replace("http://127.0.0.1:8000", server)
    installs = INSTALLS.search(text) if block.info in ("sh", "bash", "console") else None
    assert installs is None, f"{block.name} runs {installs.group()!r}: mark it not run"
    if block.info == "python":
        done = _run([sys.executable, "-c", text], tmp_path, env)
        assert done.returncode == 0, done.stderr
    elif block.info in ("sh", "bash"):
        done = _run(["bash", "-e", "-c", text], tmp_path, env)
        assert done.returncode == 0, done.stderr
        assert '"error"' not in done.stdout, done.stdout
    elif block.info == "console":
        _console(block, tmp_path, env)
    elif block.info == "json":
        json.loads(text)
    elif block.info == "env":
        _env_recipe(text, tmp_path, env)
    else:
        pytest.fail(f"{block.name}: no way to run a {block.info!r} block; mark it not run")


def test_blocks_not_run_say_why() -> None:
    assert RUNNABLE and all(b.skip is None or b.skip.strip() for b in BLOCKS)
    assert all(b.info for b in BLOCKS), [b.name for b in BLOCKS if not b.info]


def test_the_readme_is_short() -> None:
    assert len(README.splitlines()) <= 150
    assert "make run" in README and "make test" in README


def test_the_configuration_page_is_generated_from_settings() -> None:
    page = (ROOT / "docs" / "configuration.md").read_text()
    assert page == config_reference.render(), "run: python -m tools.config_reference"


@pytest.mark.skipif(shutil.which("mkdocs", path=str(BIN)) is None, reason="mkdocs not installed")
def test_the_docs_build_strictly(tmp_path: Path) -> None:
    done = _run(
        [str(BIN / "mkdocs"), "build", "--strict", "-q", "-d", str(tmp_path / "site")],
        ROOT,
        {**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, done.stderr


def _commands() -> list[str]:
    names = []
    for command in app.registered_commands:
        names.append(command.name or command.callback.__name__.replace("_", "-"))
    for group in app.registered_groups:
        for command in group.typer_instance.registered_commands:
            names.append(f"{group.name} {command.name}")
    return names


def test_every_cli_command_is_in_the_cli_page() -> None:
    page = (ROOT / "docs" / "cli.md").read_text()
    documented = set(re.findall(r"`omoide ([a-z]+(?: [a-z]+)?)", page))
    documented |= {f"jobs {m}" for m in re.findall(r"`jobs ([a-z]+)", page)}
    missing = [c for c in _commands() if c not in documented and c.split()[0] not in documented]
    assert not missing, f"commands missing from docs/cli.md: {missing}"


def test_all_is_sorted_and_exact() -> None:
    assert omoide.__all__ == sorted(omoide.__all__)
    public = {n for n in vars(omoide) if not n.startswith("_") and n[0].isupper()}
    assert public == {n for n in omoide.__all__ if not n.startswith("_")}
