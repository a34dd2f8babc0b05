"""Another process writing the same file: its acknowledged rows are found, deleted ones never."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from omoide import Memory
from omoide.embed import HashEmbedder

SCRIPT = """
import sys
from omoide import Memory
from omoide.embed import HashEmbedder
with Memory(sys.argv[1], embedder=HashEmbedder(), workers=0) as m:
    if sys.argv[2] == "add":
        print(m.add("zebra crossing at midnight", user_id="alice")[0].id)
    else:
        m.delete(sys.argv[3], user_id="alice")
"""


def _other_process(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, *args], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_vector_cache_follows_writes_of_other_processes(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    with Memory(path, embedder=HashEmbedder(), workers=0) as memory:
        memory.add("tea in the morning", user_id="alice")
        assert len(memory.search("tea", user_id="alice", recipe="vector").hits) == 1  # cached
        new_id = _other_process(str(path), "add")
        hits = memory.search("zebra crossing midnight", user_id="alice", recipe="vector").hits
        assert hits[0].memory.id == new_id
        _other_process(str(path), "delete", new_id)
        hits = memory.search("zebra crossing midnight", user_id="alice", recipe="vector").hits
        assert new_id not in [h.memory.id for h in hits]
