"""``omoide encrypt`` / ``decrypt`` / ``rekey`` and encrypted exports, on real files through
typer's CliRunner; keys come from the environment and never appear in any output."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from omoide.cli import app, state
from omoide.engine.transfer import sealed
from omoide.store.sqlite import cipher
from omoide.store.sqlite.rekey import TEMP_SUFFIX
from tests.encryption.conftest import SENTENCE, holds_plaintext

OLD, NEW = "old passphrase 1", "new passphrase 2"
ROOT = Path(__file__).resolve().parents[2]
HOLD = """
import sys
from omoide import Memory
from omoide.config import load_settings
with Memory(sys.argv[1], settings=load_settings(embedder="hash"), workers=0) as memory:
    memory.get_all(user_id="alice")
    print("open", flush=True)
    sys.stdin.read()
"""
Cli = Callable[..., tuple[int, str, str]]


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Cli]:
    monkeypatch.setenv("OMOIDE_EMBEDDER", "hash")
    monkeypatch.setenv("OMOIDE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("OMOIDE_ENCRYPTION_KEY", "AES_KEY", "MEMORY_CODEC", "OMOIDE_NEW_ENCRYPTION_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)

    def invoke(*args: str, key: str | None = None, new: str | None = None) -> tuple[int, str, str]:
        for name, value in (("OMOIDE_ENCRYPTION_KEY", key), ("OMOIDE_NEW_ENCRYPTION_KEY", new)):
            if value is None:
                monkeypatch.delenv(name, raising=False)
            else:
                monkeypatch.setenv(name, value)
        state.settings = None
        state.db = None
        result = CliRunner().invoke(app, list(args))
        for secret in (key, new):
            assert secret is None or secret not in result.stdout + result.stderr
        return result.exit_code, result.stdout, result.stderr

    yield invoke
    state.settings = None
    state.db = None


def _db(tmp_path: Path) -> Path:
    return tmp_path / "data" / "omoide.db"


def _texts(cli: Cli, key: str | None) -> list[str]:
    code, out, err = cli("list", "--user", "alice", "--json", key=key)
    assert code == 0, err
    return [m["text"] for m in json.loads(out)["items"]]


def test_encrypt_in_place_then_reopen_then_decrypt(cli: Cli, tmp_path: Path) -> None:
    assert cli("add", SENTENCE.decode(), "--user", "alice")[0] == 0
    db = _db(tmp_path)
    assert holds_plaintext(db) or holds_plaintext(db.with_name(db.name + "-wal"))
    code, out, err = cli("encrypt", key=OLD)
    assert code == 0, err
    assert "encrypted" in out
    assert cipher.is_encrypted(db) and not holds_plaintext(db)
    assert not db.with_name(db.name + TEMP_SUFFIX).exists()
    assert _texts(cli, OLD) == [SENTENCE.decode()]
    code, _, err = cli("list", "--user", "alice")
    assert code == 1 and "encrypted" in err and "OMOIDE_ENCRYPTION_KEY" in err
    code, _, err = cli("encrypt", key=NEW)
    assert code == 1 and "already encrypted" in err
    code, _, err = cli("decrypt", key=OLD)
    assert code == 0, err
    assert sqlite3.connect(db).execute("SELECT text FROM memories").fetchall() == [
        (SENTENCE.decode(),)
    ]
    assert _texts(cli, None) == [SENTENCE.decode()]


def test_a_stale_temporary_file_of_a_crashed_run_changes_nothing(cli: Cli, tmp_path: Path) -> None:
    assert cli("add", "kept", "--user", "alice")[0] == 0
    db = _db(tmp_path)
    db.with_name(db.name + TEMP_SUFFIX).write_bytes(b"half-written by a killed omoide encrypt")
    assert _texts(cli, None) == ["kept"]  # the original is what opens
    assert cli("encrypt", key=OLD)[0] == 0
    assert _texts(cli, OLD) == ["kept"]


def test_rekey_changes_the_key(cli: Cli, tmp_path: Path) -> None:
    assert cli("add", SENTENCE.decode(), "--user", "alice", key=OLD)[0] == 0
    code, out, err = cli("rekey", key=OLD, new=NEW)
    assert code == 0, err
    assert "re-keyed" in out
    assert _texts(cli, NEW) == [SENTENCE.decode()]
    code, _, err = cli("list", "--user", "alice", key=OLD)
    assert code == 1 and "wrong encryption key" in err
    assert not holds_plaintext(_db(tmp_path))
    code, _, err = cli("rekey", key="guess", new="x")
    assert code == 1 and "wrong encryption key" in err


def test_a_change_is_refused_while_another_process_has_it_open(cli: Cli, tmp_path: Path) -> None:
    assert cli("add", "busy", "--user", "alice")[0] == 0
    holder = subprocess.Popen(  # another process (POSIX locks never conflict within one)
        [sys.executable, "-c", HOLD, str(_db(tmp_path))],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
        code, _, err = cli("encrypt", key=OLD)
    finally:
        holder.communicate("", timeout=60)
    assert code == 1 and "in use by another process" in err
    assert not cipher.is_encrypted(_db(tmp_path))
    assert _texts(cli, None) == ["busy"]


def test_export_with_a_key_is_encrypted_and_imports_with_it(cli: Cli, tmp_path: Path) -> None:
    assert cli("add", SENTENCE.decode(), "--user", "alice", key=OLD)[0] == 0
    code, _, err = cli("export", "alice.jsonl", "--user", "alice", key=OLD)
    assert code == 0, err
    export = tmp_path / "alice.jsonl"
    assert sealed.is_sealed(export) and not holds_plaintext(export, b"walrus")
    code, _, err = cli("--db", str(tmp_path / "keyless.db"), "import", "alice.jsonl")
    assert code == 1 and "encrypted export: set OMOIDE_ENCRYPTION_KEY" in err
    other = str(tmp_path / "other.db")
    code, _, err = cli("--db", str(tmp_path / "third.db"), "import", "alice.jsonl", key="nope")
    assert code == 1 and "wrong encryption key" in err
    code, out, err = cli("--db", other, "import", "alice.jsonl", "--json", key=OLD)
    assert code == 0, err
    assert json.loads(out)["records"]["memory"] == 1
    code, out, _ = cli("--db", other, "search", "walrus", "--user", "alice", "--json", key=OLD)
    assert json.loads(out)["hits"][0]["memory"]["text"] == SENTENCE.decode()
    assert cipher.is_encrypted(Path(other))


def test_a_plain_export_needs_the_flag(cli: Cli, tmp_path: Path) -> None:
    assert cli("add", SENTENCE.decode(), "--user", "alice", key=OLD)[0] == 0
    code, _, err = cli("export", "plain.jsonl", "--plain", key=OLD)
    assert code == 0, err
    lines = (tmp_path / "plain.jsonl").read_text().splitlines()
    assert json.loads(lines[0])["format"] == "omoide-export"
    assert any(SENTENCE.decode() in line for line in lines)
    code, _, err = cli("--db", str(tmp_path / "plain-copy.db"), "import", "plain.jsonl")
    assert code == 0, err


def test_a_truncated_or_altered_export_is_refused(cli: Cli, tmp_path: Path) -> None:
    for i in range(3):
        assert cli("add", f"memory number {i}", "--user", "alice", key=OLD)[0] == 0
    assert cli("export", "all.jsonl", key=OLD)[0] == 0
    data = (tmp_path / "all.jsonl").read_bytes()
    (tmp_path / "cut.jsonl").write_bytes(data[:-40])
    code, _, err = cli("--db", str(tmp_path / "a.db"), "import", "cut.jsonl", key=OLD)
    assert code == 1 and ("truncated" in err or "damaged" in err)
    flipped = bytearray(data)
    flipped[len(flipped) // 2] ^= 1
    (tmp_path / "flipped.jsonl").write_bytes(bytes(flipped))
    code, _, err = cli("--db", str(tmp_path / "b.db"), "import", "flipped.jsonl", key=OLD)
    assert code == 1 and "damaged" in err


def test_a_large_export_streams_over_several_chunks(tmp_path: Path) -> None:
    path = tmp_path / "big.sealed"
    path.touch()
    line = "x" * 999 + "\n"
    with sealed.open_sealed_writer(path, OLD) as out:
        for _ in range(3_000):  # ~3 MB: several 1 MiB chunks
            out.write(line)
    with sealed.open_sealed_reader(path, OLD) as lines:
        assert sum(1 for text in lines if text == line) == 3_000


def test_status_and_backup_commands_use_the_key(cli: Cli, tmp_path: Path) -> None:
    db = tmp_path / "a folder" / "secret.db"  # a space: the status check opens a file: URI
    assert cli("--db", str(db), "add", SENTENCE.decode(), "--user", "alice", key=OLD)[0] == 0
    code, out, err = cli("--db", str(db), "migrate", "--status", "--json", key=OLD)
    assert code == 0, err
    assert json.loads(out)["pending"] == []
    code, _, err = cli("--db", str(db), "migrate", "--status")
    assert code == 1 and "encrypted" in err
    copy = tmp_path / "copy.db"
    code, _, err = cli("--db", str(db), "backup", str(copy), key=OLD)
    assert code == 0, err
    assert cipher.is_encrypted(copy) and not holds_plaintext(copy)
    code, out, err = cli("--db", str(copy), "list", "--user", "alice", "--json", key=OLD)
    assert code == 0, err
    assert [m["text"] for m in json.loads(out)["items"]] == [SENTENCE.decode()]
