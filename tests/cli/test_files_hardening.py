"""Files the CLI reads and writes (issue 36, "Also:"): ``omoide import wilmer`` over a
directory holding a symlink loop, and ``omoide export`` where a ``.partial`` symlink was
planted (it pointed the export at another file)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from omoide.cli import app, state
from tests.compat.test_wilmer_files import sha, write_chunks


def _cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> Any:
    monkeypatch.setenv("OMOIDE_EMBEDDER", "hash")
    monkeypatch.setenv("OMOIDE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("OMOIDE_ENCRYPTION_KEY", raising=False)
    monkeypatch.setattr(state, "settings", None)
    return CliRunner().invoke(app, ["--db", str(tmp_path / "cli.db"), *args])


def test_import_wilmer_skips_a_symlink_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "WilmerAI"
    write_chunks(root / "trip" / "memories.json", [("Lisbon it is.", sha("ok, Lisbon"))])
    (root / "loop").symlink_to(root / "loop")
    (root / "trip" / "chat_summary.json").symlink_to(root / "trip" / "chat_summary.json")
    done = _cli(tmp_path, monkeypatch, "import", "wilmer", str(root), "--json")
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    assert [d["discussion_id"] for d in report["discussions"]] == ["trip"]
    assert any("loop" in line for line in report.get("ignored", [])), report


def test_export_never_writes_through_a_planted_partial_symlink(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _cli(tmp_path, monkeypatch, "add", "a memory to export").exit_code == 0
    victim = tmp_path / "victim.txt"
    victim.write_text("precious", "utf-8")
    dest = tmp_path / "out.jsonl"
    (tmp_path / "out.jsonl.partial").symlink_to(victim)
    done = _cli(tmp_path, monkeypatch, "export", "jsonl", str(dest), "--json")
    assert done.exit_code == 0, done.output
    assert victim.read_text("utf-8") == "precious"
    assert not dest.is_symlink() and "a memory to export" in dest.read_text("utf-8")
    assert not (tmp_path / "out.jsonl.partial").exists()
