"""Several processes on one data dir (and one database): no edit and no memory is lost, and a
writer killed in the middle of a rewrite leaves a whole file."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

from filelock import FileLock

from omoide.engine.mirror.format import parse
from omoide.store.protocol import NewMemory
from omoide.types import MemoryType
from tests.mirror.conftest import BOUND_S, USER, open_memory, type_file, until

ROOT = Path(__file__).resolve().parents[2]


def _child(db: Path, root: Path, *args: str) -> subprocess.Popen[str]:
    # added to, not replaced: the PostgreSQL pass puts its store redirect on PYTHONPATH
    paths = [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = os.environ | {"PYTHONPATH": os.pathsep.join(paths)}
    return subprocess.Popen(
        [sys.executable, "-m", "tests.mirror.child", str(db), str(root), *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )


def _append_under_lock(path: Path, line: str) -> None:
    """What a cooperating tool does: take the tenant dir's lock, then edit the file."""
    with FileLock(str(path.parent / ".omoide-mirror.lock"), timeout=BOUND_S):
        text = path.read_text("utf-8")
        path.write_text(text + f"- {line}\n", "utf-8")


def test_two_writers_and_an_editor_lose_nothing(tmp_path: Path) -> None:
    db, root = tmp_path / "omoide.db", tmp_path / "files"
    with open_memory(db, root) as memory:  # creates the database and the tenant's file
        memory.add_many([NewMemory(text="seed", type=MemoryType.SEMANTIC)], user_id=USER)
    path = type_file(root)
    writers = [_child(db, root, "add", name, "25") for name in ("one", "two")]
    outputs: dict[int, str] = {}

    def drain(n: int, proc: subprocess.Popen[str]) -> None:
        outputs[n] = proc.communicate(timeout=300)[0]

    readers = [threading.Thread(target=drain, args=(n, p)) for n, p in enumerate(writers)]
    for reader in readers:
        reader.start()
    for k in range(20):  # edits made while both processes rewrite the same file
        _append_under_lock(path, f"edit {k}")
    for reader in readers:
        reader.join()
    assert [p.returncode for p in writers] == [0, 0]
    added = {line for out in outputs.values() for line in out.split()}
    assert len(added) == 50

    with open_memory(db, root) as memory:
        page = memory.get_all(user_id=USER, limit=1000)  # ingests what is left
        texts = sorted(i.text for i in page.items)
        expected = ["seed"] + [f"edit {k}" for k in range(20)]
        expected += [f"{n} note {i}" for n in ("one", "two") for i in range(25)]
        assert texts == sorted(expected)
        assert added <= {i.id for i in page.items}
        parsed = parse(path.read_text("utf-8"))
        assert not parsed.malformed
        assert sorted(i.text for i in parsed.items) == sorted(expected)
        assert {i.memory_id for i in parsed.items} == {i.id for i in page.items}


def test_a_writer_killed_mid_rewrite_leaves_a_whole_file(tmp_path: Path) -> None:
    db, root = tmp_path / "omoide.db", tmp_path / "files"
    with open_memory(db, root) as memory:
        memory.add_many([NewMemory(text="before", type=MemoryType.SEMANTIC)], user_id=USER)
    path = type_file(root)
    old = path.read_text("utf-8")
    writer = _child(db, root, "hang", "written when killed")
    assert writer.stdout is not None
    assert writer.stdout.readline() == "renaming\n"  # the temp file is written and fsynced
    writer.send_signal(signal.SIGKILL)
    writer.wait(timeout=BOUND_S)
    writer.stdout.close()
    assert path.read_text("utf-8") == old  # the old file, whole
    assert list(path.parent.glob(".semantic_memory.md.*.tmp"))  # what the kill left

    with open_memory(db, root) as memory:  # starting catches up on the missed rewrite
        texts = sorted(i.text for i in memory.get_all(user_id=USER).items)
        assert texts == ["before", "written when killed"]
        until(lambda: "written when killed" in path.read_text("utf-8"), "the caught-up file")
        parsed = parse(path.read_text("utf-8"))
        assert not parsed.malformed and sorted(i.text for i in parsed.items) == texts
        assert not list(path.parent.glob(".*.tmp"))
