"""The operator's CLI, driven through typer's CliRunner on real files."""

from __future__ import annotations

import json
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
    state.settings = None
    state.db = None

    def invoke(*args: str) -> tuple[int, str, str]:
        result = runner.invoke(app, list(args))
        return result.exit_code, result.stdout, result.stderr

    yield invoke
    state.settings = None


def test_add_search_get_list_delete_roundtrip(cli) -> None:
    code, out, _ = cli("add", "I like jasmine tea", "--user", "alice", "--json")
    assert code == 0
    memory_id = json.loads(out)[0]["id"]
    code, out, _ = cli("search", "jasmine", "--user", "alice", "--json")
    assert code == 0 and json.loads(out)["hits"][0]["memory"]["id"] == memory_id
    code, out, _ = cli("get", memory_id, "--user", "alice", "--json")
    assert json.loads(out)["text"] == "I like jasmine tea"
    code, out, _ = cli("list", "--user", "alice", "--json")
    assert json.loads(out)["total"] == 1
    assert cli("delete", memory_id, "--user", "alice")[0] == 0
    code, _, err = cli("get", memory_id, "--user", "alice")
    assert code == 1 and err.strip() == f"error: memory '{memory_id}' not found"


def test_other_tenant_cannot_read(cli) -> None:
    memory_id = json.loads(cli("add", "secret", "--user", "alice", "--json")[1])[0]["id"]
    assert cli("get", memory_id, "--user", "bob")[0] == 1


def test_errors_are_one_line_and_exit_1(cli) -> None:
    code, _, err = cli("add", "   ")
    assert code == 1 and err.count("\n") == 1 and "must not be empty" in err


def test_usage_error_exits_2(cli) -> None:
    assert cli("search")[0] == 2


def test_backup_migrate_doctor_reindex(cli, tmp_path: Path) -> None:
    cli("add", "tea")
    code, out, _ = cli("migrate", "--status", "--json")
    assert code == 0 and json.loads(out)["pending"] == []
    target = tmp_path / "snap.db"
    assert cli("backup", str(target))[0] == 0 and target.stat().st_size > 0
    code, _, err = cli("backup", str(target))
    assert code == 1 and "already exists" in err
    code, out, _ = cli("doctor", "--json")
    report = json.loads(out)
    assert code == 0 and report["embedder"]["status"] == "ok"
    assert report["llm"]["status"] == "disabled" and report["store"]["schema_version"] >= 1
    code, out, _ = cli("reindex", "--json")
    assert code == 0 and json.loads(out) == {"reindexed": 1}


def test_migrate_status_on_missing_database_changes_nothing(cli, tmp_path: Path) -> None:
    code, out, _ = cli("--db", str(tmp_path / "new.db"), "migrate", "--status", "--json")
    assert code == 0 and json.loads(out)["version"] == 0
    assert not (tmp_path / "new.db").exists()


def test_jobs_list_and_run(cli) -> None:
    cli("add", "tea")
    code, out, _ = cli("jobs", "list", "--json")
    assert code == 0 and json.loads(out)["counts"]["failed"] == 0
    assert json.loads(cli("jobs", "run", "--json")[1]) == {"ran": 0}
