"""``omoide export`` / ``omoide import FILE`` through typer's CliRunner on real files."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from omoide.cli import app, state

runner = CliRunner()


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OMOIDE_EMBEDDER", "hash")
    monkeypatch.setenv("OMOIDE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)

    def invoke(*args: str) -> tuple[int, str, str]:
        state.settings = None
        state.db = None
        result = runner.invoke(app, list(args))
        return result.exit_code, result.stdout, result.stderr

    yield invoke
    state.settings = None
    state.db = None


def test_export_then_import_into_another_database(cli, tmp_path: Path) -> None:
    assert cli("add", "I like jasmine tea", "--user", "alice")[0] == 0
    assert cli("add", "Bob plays chess", "--user", "bob")[0] == 0
    code, out, err = cli("export", "alice.jsonl", "--user", "alice", "--json")
    assert code == 0, err
    assert json.loads(out)["records"]["memory"] == 1
    assert stat.S_IMODE((tmp_path / "alice.jsonl").stat().st_mode) == 0o600
    other = str(tmp_path / "other.db")
    code, out, err = cli("--db", other, "import", "alice.jsonl")
    assert code == 0, err
    assert out.startswith("imported ") and "0 already present" in out
    code, out, _ = cli("--db", other, "import", "alice.jsonl", "--json")
    assert code == 0 and json.loads(out)["records"]["memory"] == 0  # idempotent
    code, out, _ = cli("--db", other, "search", "jasmine", "--user", "alice", "--json")
    assert json.loads(out)["hits"][0]["memory"]["text"] == "I like jasmine tea"
    code, out, _ = cli("--db", other, "list", "--user", "bob", "--json")
    assert json.loads(out)["total"] == 0


def test_a_model_mismatch_exits_1_naming_reembed(cli, tmp_path: Path, monkeypatch) -> None:
    cli("add", "I like jasmine tea", "--user", "alice")
    assert cli("export", "all.jsonl")[0] == 0
    monkeypatch.setenv("OMOIDE_EMBEDDER", "openai")
    monkeypatch.setenv("OMOIDE_EMBED_API_BASE", "http://127.0.0.1:9/v1")  # never called
    code, _, err = cli("--db", str(tmp_path / "other.db"), "import", "all.jsonl")
    message = " ".join(err.split())  # the console wraps long lines
    assert code == 1 and "error: the export's vectors come from hash/256" in message
    assert "--reembed" in message and "Traceback" not in err
    code, out, err = cli("--db", str(tmp_path / "other.db"), "import", "all.jsonl", "--reembed")
    assert code == 0, err
    assert "1 embed jobs queued" in out


def test_the_other_importers_are_still_subcommands(cli, tmp_path: Path) -> None:
    (tmp_path / "wilmer").mkdir()
    code, _out, err = cli("import", "wilmer", str(tmp_path / "wilmer"), "--json")
    # Routed to the WilmerAI importer (not read as a JSONL file), which refuses a directory
    # without any discussion (issue 12).
    assert code == 1 and "no WilmerAI discussion found" in err
    assert cli("import", "missing.jsonl")[0] != 0
