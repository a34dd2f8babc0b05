"""The first hour on the command line, continued: a missing import file is one line and creates
nothing, an export never draws a progress bar before it refuses, help reads as prose (flags
without a type, paragraphs not broken where the source was), a forgotten ``--user`` is said
on a terminal, ``search --threshold``, and an entity's name works where its id does."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from omoide import Memory
from omoide.cli import app, state
from omoide.embed import HashEmbedder

REPO = Path(__file__).parents[2]
runner = CliRunner()
Invoke = Callable[..., tuple[int, str, str]]


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Invoke]:
    monkeypatch.setenv("OMOIDE_EMBEDDER", "hash")
    monkeypatch.setenv("OMOIDE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    state.settings = None

    def invoke(*args: str) -> tuple[int, str, str]:
        state.db = None
        result = runner.invoke(app, list(args), terminal_width=1000)
        return result.exit_code, result.stdout, result.stderr

    yield invoke
    state.settings = None
    state.db = None


def test_importing_a_missing_file_is_one_line_and_creates_nothing(
    cli: Invoke, tmp_path: Path
) -> None:
    code, out, err = cli("import", "nope.jsonl")
    assert code == 1 and out == ""
    assert err == "error: no file nope.jsonl to import (omoide export writes one)\n"
    assert not (tmp_path / "data").exists()  # no empty database left behind


def test_an_export_refuses_an_existing_file_before_any_progress(
    cli: Invoke, tmp_path: Path
) -> None:
    assert cli("add", "I like jasmine tea", "--user", "alice")[0] == 0
    (tmp_path / "existing.jsonl").write_text("mine\n")
    code, out, err = cli("export", "existing.jsonl")
    assert code == 1 and out == ""
    assert err.startswith("error: existing.jsonl already exists") and err.count("\n") == 1
    assert (tmp_path / "existing.jsonl").read_text() == "mine\n"


HELPS = [[], ["doctor"], ["worker"], ["import", "jsonl"], ["export", "jsonl"], ["search"]]


@pytest.mark.parametrize("command", HELPS, ids=lambda c: " ".join(c) or "main")
def test_help_is_prose_and_flags_have_no_type(cli: Invoke, command: list[str]) -> None:
    code, out, _ = cli(*command, "--help")
    assert code == 0 and "<bool>" not in out
    description = out.split("\n\n", 1)[1].split("\nOptions:")[0].split("\nArguments:")[0]
    for paragraph in description.strip().split("\n\n"):
        # at a wide terminal a paragraph is one line: the docstring's own line breaks are gone
        assert "\n" not in paragraph.strip(), paragraph
    assert "--help  " in out or "--help " in out


def test_search_threshold_drops_weak_hits(cli: Invoke) -> None:
    cli("add", "I like jasmine tea", "--user", "alice")
    cli("add", "The train leaves at noon", "--user", "alice")
    _, everything, _ = cli("search", "jasmine tea", "--user", "alice", "--json")
    scores = [h["score"] for h in json.loads(everything)["hits"]]
    assert len(scores) == 2 and scores[0] > scores[1]
    cut = (scores[0] + scores[1]) / 2
    code, out, _ = cli(
        "search", "jasmine tea", "--user", "alice", "--threshold", str(cut), "--json"
    )
    assert code == 0
    assert [h["memory"]["text"] for h in json.loads(out)["hits"]] == ["I like jasmine tea"]
    assert cli("search", "tea", "--threshold", "2")[0] == 2  # outside 0..1: a usage error


def test_graph_neighborhood_takes_a_name(cli: Invoke, tmp_path: Path) -> None:
    db = tmp_path / "graph.db"
    with Memory(db, embedder=HashEmbedder(), workers=0) as memory:
        mei = memory.upsert_entity("Mei", "person", user_id="mei")
        lisbon = memory.upsert_entity("Lisbon", "location", user_id="mei")
        memory.upsert_relationship(mei.id, lisbon.id, "lives in", user_id="mei")
    for name in ("Mei", "mei", mei.id):
        code, out, err = cli("graph", "neighborhood", name, "--user", "mei", "--db", str(db))
        assert code == 0, err
        assert "Mei -[lives in]-> Lisbon" in out
    code, _, err = cli("graph", "neighborhood", "Nobody", "--user", "mei", "--db", str(db))
    assert code == 1 and "neither an entity id nor a name" in err


def _on_a_terminal(tmp_path: Path, *args: str) -> tuple[int, str]:
    """``python -m omoide ARGS`` with stdin, stdout and stderr on a pseudo-terminal."""
    primary, secondary = pty.openpty()
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "HOME": str(tmp_path),
        "OMOIDE_EMBEDDER": "hash",
        "OMOIDE_DATA_DIR": str(tmp_path / "data"),
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "omoide", *args],
        stdin=secondary,
        stdout=secondary,
        stderr=secondary,
        env=env,
        cwd=tmp_path,
    )
    os.close(secondary)
    chunks = []
    while True:
        try:
            chunk = os.read(primary, 4096)
        except OSError:  # the terminal closed: the process is done
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(primary)
    return process.wait(timeout=60), b"".join(chunks).decode()


def test_a_forgotten_user_is_said_on_a_terminal(cli: Invoke, tmp_path: Path) -> None:
    code, shown = _on_a_terminal(tmp_path, "add", "I like jasmine tea")
    assert code == 0 and "added " in shown
    assert 'warning: no --user given: storing for the user "default"' in shown
    code, shown = _on_a_terminal(tmp_path, "add", "I like oolong", "--user", "alice")
    assert code == 0 and "warning" not in shown
    # a script (no terminal) is not told: its output stays what it parses
    code, out, err = cli("add", "I like green tea")
    assert code == 0 and err == "" and out.startswith("added ")
