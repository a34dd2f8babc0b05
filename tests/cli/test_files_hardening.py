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
from tests.compat.test_wilmer_files import VENUE, sha, write_chunks, write_vector_db


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


def _refused(done: Any, words: str) -> None:
    """Exit 1 with one ``error:`` line naming ``words`` (after any progress bar), not a
    traceback."""
    assert done.exit_code == 1 and isinstance(done.exception, SystemExit), done.output
    lines = [line for line in done.stderr.strip().splitlines() if "━" not in line]
    assert len(lines) == 1 and lines[0].startswith("error: ") and words in lines[0], lines


def _export(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, Any], ...]:
    """The header and the memory record of an export of one memory (the store then gone)."""
    assert _cli(tmp_path, monkeypatch, "add", "I like green tea", "-u", "alice").exit_code == 0
    out = tmp_path / "out.jsonl"
    assert _cli(tmp_path, monkeypatch, "export", str(out)).exit_code == 0
    (tmp_path / "cli.db").unlink()
    records = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    return records[0], next(r for r in records if r["kind"] == "memory")


def _import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, records: list[dict[str, Any]]) -> Any:
    path = tmp_path / "edited.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    return _cli(tmp_path, monkeypatch, "import", str(path))


def test_import_of_a_file_that_is_not_utf8_is_one_error_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_bytes(b"\xff\xfe\x00garbage\n")
    _refused(_cli(tmp_path, monkeypatch, "import", str(damaged)), "not UTF-8")


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("created_at", "yesterday", "'created_at' must be a whole number"),
        ("access_count", 1.5, "'access_count' must be a whole number"),
        ("user_id", 7, "'user_id' must be a string"),
        ("vector", "AAAA", "'vector' holds 3 bytes"),
        ("access_count", 2**70, "integer out of range"),
        ("text", 5, "'text' must be a string"),
        ("type", "bogus", "'type' must be one of"),
        ("metadata", [1, 2], "'metadata' must be an object"),
        ("metadata", {"note": "a\x00b"}, "metadata.note: must not contain NUL"),
        ("metadata", {"k\x00": 1}, "key must not contain NUL"),
        ("metadata", {"deep": json.loads("[" * 100 + "]" * 100)}, "nested more than 64"),
    ],
)
def test_import_refuses_a_record_whose_values_would_break_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, field: str, value: Any, words: str
) -> None:
    # Such a record was written as is: SQLite keeps any value in any column, and then
    # listing or searching the tenant failed with a traceback for good.
    header, memory = _export(tmp_path, monkeypatch)
    _refused(_import(tmp_path, monkeypatch, [header, {**memory, field: value}]), words)
    assert _import(tmp_path, monkeypatch, [header, memory]).exit_code == 0
    for command in (["list"], ["search", "green tea"]):
        done = _cli(tmp_path, monkeypatch, *command, "-u", "alice", "--json")
        assert done.exit_code == 0 and "I like green tea" in done.stdout, done.output


def test_import_of_a_line_nested_past_the_parser_is_one_error_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    header, _ = _export(tmp_path, monkeypatch)
    path = tmp_path / "deep.jsonl"
    path.write_text(json.dumps(header) + "\n" + "[" * 100_000 + "]" * 100_000 + "\n", "utf-8")
    _refused(_cli(tmp_path, monkeypatch, "import", str(path)), "(nested too deeply)")


DEEP = json.loads("[" * 100 + "]" * 100)


@pytest.mark.parametrize(
    ("chunks", "vector_meta", "words"),
    [
        ("[" * 100_000 + "]" * 100_000, None, "memories.json: JSON nested too deeply"),
        ('[{"text_block": "a\\ud800b"}]', None, "memories.json: record 1: text: contains a lone"),
        ('[{"text_block": "a\\u0000b"}]', None, "record 1: text: must not contain NUL"),
        (None, {"nan": float("nan")}, "memory 1: metadata_json.nan: must be a finite number"),
        (None, {"deep": DEEP}, "memory 1: metadata_json.deep.0.0"),
    ],
    ids=["parser-deep", "surrogate", "nul", "nan", "deep"],
)
def test_import_wilmer_refuses_values_no_request_could_store(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    chunks: str | None,
    vector_meta: dict[str, Any] | None,
    words: str,
) -> None:
    # Imported as they were, the nested metadata made every listing and search of the
    # tenant a 500 (JSON serialization depth), NaN every search (SQLite: malformed JSON); the
    # others were a traceback.
    root = tmp_path / "WilmerAI"
    if chunks is not None:
        (root / "trip").mkdir(parents=True)
        (root / "trip" / "memories.json").write_text(chunks, "utf-8")
    if vector_meta is not None:
        write_vector_db(root / "trip" / "vector_memory.db", "trip", [VENUE | vector_meta], "x")
    done = _cli(tmp_path, monkeypatch, "import", "wilmer", str(root))
    assert done.exit_code == 1 and isinstance(done.exception, SystemExit), done.output
    said = " ".join(done.stdout.split())  # rich wraps long lines
    assert "trip: not imported: " in said and words in said, said
    listed = _cli(tmp_path, monkeypatch, "list", "--json")
    assert listed.exit_code == 0 and json.loads(listed.stdout)["total"] == 0, listed.output


@pytest.mark.sqlite_only("--db names a SQLite file's path (a PostgreSQL URL names no file)")
def test_a_database_path_that_is_a_directory_is_one_error_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "adir").mkdir()
    done = CliRunner().invoke(app, ["--db", str(tmp_path / "adir"), "add", "x"])
    _refused(done, "Is a directory")


def test_backup_never_writes_through_a_dangling_symlink(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _cli(tmp_path, monkeypatch, "add", "a secret conversation").exit_code == 0
    target = tmp_path / "elsewhere.db"
    (tmp_path / "backup.db").symlink_to(target)
    _refused(_cli(tmp_path, monkeypatch, "backup", str(tmp_path / "backup.db")), "exists")
    assert not target.exists()


def test_backup_below_a_file_is_one_error_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _cli(tmp_path, monkeypatch, "add", "x").exit_code == 0
    (tmp_path / "afile").write_text("", "utf-8")
    done = _cli(tmp_path, monkeypatch, "backup", str(tmp_path / "afile" / "b.db"))
    _refused(done, "afile")


def test_serve_refuses_a_port_out_of_range(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    done = _cli(tmp_path, monkeypatch, "serve", "--port", "99999")
    assert done.exit_code == 2 and "--port" in done.output, done.output


@pytest.mark.sqlite_only("damages pages of the SQLite file the backup copies")
def test_a_backup_that_fails_midway_leaves_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A full disk did the same: a traceback, and an empty file where the backup should be.
    for n in range(20):
        assert _cli(tmp_path, monkeypatch, "add", f"memory number {n}").exit_code == 0
    db = tmp_path / "cli.db"
    data, page = bytearray(db.read_bytes()), 4096
    data[-3 * page :] = b"\xab" * (3 * page)  # the last pages damaged, the schema intact
    db.write_bytes(bytes(data))
    dest = tmp_path / "backup.db"
    _refused(_cli(tmp_path, monkeypatch, "backup", str(dest)), f"backup to {dest} failed")
    assert not dest.exists()


def test_migrate_status_takes_a_relative_database_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every relative --db was a traceback: a SQLite URI needs an absolute path.
    assert _cli(tmp_path, monkeypatch, "add", "x").exit_code == 0
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(app, ["--db", "cli.db", "migrate", "--status", "--json"])
    assert done.exit_code == 0 and json.loads(done.stdout)["pending"] == [], done.output


@pytest.mark.sqlite_only("migrate --db names a SQLite file's path")
@pytest.mark.parametrize("status", [[], ["--status"]])
def test_migrate_on_a_directory_is_one_error_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, status: list[str]
) -> None:
    _cli(tmp_path, monkeypatch, "--help")  # the settings' environment, for the runs below
    (tmp_path / "adir").mkdir()
    done = CliRunner().invoke(app, ["--db", str(tmp_path / "adir"), "migrate", *status])
    _refused(done, "cannot open")
