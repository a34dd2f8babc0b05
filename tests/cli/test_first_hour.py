"""What a new user meets on the command line: reads never create a database, ``--db`` goes
before or after the command, help speaks plainly, output is for people unless ``--json``."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from omoide.cli import app, db_first, state

runner = CliRunner()
Invoke = Callable[..., tuple[int, str, str]]


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Invoke]:
    monkeypatch.setenv("OMOIDE_EMBEDDER", "hash")
    monkeypatch.setenv("OMOIDE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    state.settings = None
    state.db = None

    def invoke(*args: str) -> tuple[int, str, str]:
        state.db = None  # the callback sets it from this command line only
        result = runner.invoke(app, list(args))
        return result.exit_code, result.stdout, result.stderr

    yield invoke
    state.settings = None
    state.db = None


READS = [
    ["list"],
    ["search", "tea"],
    ["get", "0123"],
    ["delete", "0123"],
    ["backup", "snapshot.db"],
    ["context", "tea"],
    ["graph", "search", "Mei"],
    ["graph", "neighborhood", "0123"],
    ["jobs", "list"],
    ["jobs", "run"],
    ["jobs", "retry", "1"],
    ["reindex"],
    ["consolidate", "chat-1"],
    ["doctor"],  # with an explicit --db: a typo must not create a file
]


@pytest.mark.parametrize("command", READS, ids=" ".join)
def test_reads_refuse_a_missing_database(cli: Invoke, tmp_path: Path, command: list[str]) -> None:
    missing = tmp_path / "typo.db"
    code, _, err = cli(*command, "--db", str(missing))
    assert code == 1
    assert err.count("\n") == 1 and err.startswith(f"error: no database at {missing}")
    assert not missing.exists() and not (tmp_path / "snapshot.db").exists()


def test_default_database_missing_too(cli: Invoke, tmp_path: Path) -> None:
    code, _, err = cli("list", "--user", "alice")
    assert code == 1 and "no database at" in err and "omoide add" in err
    assert not (tmp_path / "data" / "omoide.db").exists()


def test_db_before_or_after_the_command(cli: Invoke, tmp_path: Path) -> None:
    db = tmp_path / "mine.db"
    assert cli("add", "I like jasmine tea", "--user", "alice", "--db", str(db))[0] == 0
    assert db.exists() and not (tmp_path / "data" / "omoide.db").exists()
    for args in (
        ["--db", str(db), "list", "--user", "alice", "--json"],
        ["list", "--user", "alice", "--json", "--db", str(db)],
        ["list", f"--db={db}", "--user", "alice", "--json"],
    ):
        code, out, _ = cli(*args)
        assert code == 0 and json.loads(out)["total"] == 1, args
    code, out, _ = cli("jobs", "list", "--json", "--db", str(db))
    assert code == 0 and "counts" in json.loads(out)


def test_db_first_stops_at_double_dash() -> None:
    assert db_first(["add", "--", "--db", "x"]) == ["add", "--", "--db", "x"]
    assert db_first(["list", "--db", "a.db", "-u", "x"]) == ["--db", "a.db", "list", "-u", "x"]


def _helps() -> Iterator[tuple[list[str], str]]:
    yield [], runner.invoke(app, ["--help"]).stdout
    for command in app.registered_commands:
        name = command.name or command.callback.__name__.replace("_", "-")  # type: ignore[union-attr]
        yield [name], runner.invoke(app, [name, "--help"]).stdout
    for group in app.registered_groups:
        for command in group.typer_instance.registered_commands:  # type: ignore[union-attr]
            args = [str(group.name), str(command.name)]
            yield args, runner.invoke(app, [*args, "--help"]).stdout


def test_help_is_plain_text_without_jargon() -> None:
    jargon = re.compile(r"`|\bMemory\b|VACUUM|[Tt]enant|external\)|thin shell|[Mm]ixin")
    for args, text in _helps():
        assert "Usage" in text, args
        assert not jargon.search(text), (args, jargon.search(text))


def test_human_output_unless_json(cli: Invoke, tmp_path: Path) -> None:
    code, out, _ = cli("add", "I like jasmine tea", "--user", "alice", "--json")
    memory_id = json.loads(out)[0]["id"]
    for args in (
        ["get", memory_id, "--user", "alice"],
        ["doctor"],
        ["migrate", "--status"],
        ["list", "--user", "alice"],
    ):
        code, out, _ = cli(*args)
        assert code == 0 and not out.lstrip().startswith(("{", "[")), args
    assert cli("get", memory_id, "--user", "alice")[1].startswith("I like jasmine tea\n")
    code, out, _ = cli("doctor")
    assert re.search(r"^store\s+ok\s", out, re.MULTILINE)
    assert re.search(r"^llm\s+disabled\s", out, re.MULTILINE)
