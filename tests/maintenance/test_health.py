"""Truthful health (issue 15, item 7, and item 2's report of memories without a vector): a
corrupt file, another embedding model, memories vector search cannot find, and a full disk."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from omoide import Memory, StoreError
from omoide.embed import HashEmbedder
from omoide.embed.remote import OpenAICompatEmbedder
from omoide.store.protocol import NewMemory
from tests.api.conftest import running

ROOT = Path(__file__).resolve().parents[2]


def _down() -> OpenAICompatEmbedder:
    return OpenAICompatEmbedder("http://127.0.0.1:9/v1", "any", timeout=0.5)


def _corrupt(path: Path) -> None:
    """Overwrite the root page of an index with garbage, as a bad disk sector would."""
    with Memory(path, embedder=HashEmbedder(), workers=0) as memory:
        memory.add_many([NewMemory(text=f"note {i} about tea " * 3) for i in range(300)])
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        [root] = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'memories_tenant'")
    finally:
        conn.close()
    with path.open("r+b") as f:
        f.seek((root[0] - 1) * page_size)
        f.write(b"\xff" * page_size)


@pytest.mark.sqlite_only("overwrites a page of the SQLite file (PostgreSQL checks its own pages)")
def test_a_corrupt_file_is_reported_down_by_health_and_doctor(tmp_path: Path) -> None:
    path = tmp_path / "corrupt.db"
    _corrupt(path)
    memory = Memory(path, embedder=HashEmbedder(), workers=0)
    with running(path, HashEmbedder(), engine=memory) as server, server.http() as http:
        reply = http.get("/health")  # the first report runs the bounded check itself
        assert reply.status_code == 503 and reply.json()["status"] == "down"
        doctor = memory.health(probe_embedder=True)["store"]  # what `omoide doctor` runs
    assert doctor["status"] == "down" and doctor["integrity"] == "corrupt"
    assert "corrupt" in doctor["error"] and "Page" in doctor["error"]


def test_another_embedding_model_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with Memory(path, embedder=HashEmbedder(), workers=0) as memory:
        memory.add("tea", user_id="alice")
    memory = Memory(path, embedder=HashEmbedder(32), workers=0)
    embedder = memory.health()["embedder"]
    assert embedder["status"] == "down" and "omoide reindex" in embedder["error"]
    with running(path, HashEmbedder(32), engine=memory) as server, server.http() as http:
        body = http.get("/health").json()
    assert body["status"] == "degraded" and body["embedder"]["status"] == "down"


def test_memories_without_a_vector_make_search_and_health_degraded(tmp_path: Path) -> None:
    with Memory(tmp_path / "m.db", embedder=HashEmbedder(), workers=0) as memory:
        memory.add("green tea", user_id="alice")
        memory.embedder = _down()
        memory.add("jasmine tea", user_id="alice")  # its vector is a queued job
        memory.embedder = HashEmbedder()  # the embedder is back, the job has not run
        result = memory.search("tea", user_id="alice")
        assert result.degraded and "1 memories have no vector" in result.warnings[0]
        assert not memory.search("tea", user_id="bob").degraded  # another tenant is whole
        vectors = memory.health()["vectors"]
        assert vectors["status"] == "degraded" and vectors["without_vector"] == 1
        memory.run_jobs()
        assert not memory.search("tea", user_id="alice").degraded
        assert memory.health()["vectors"] == {"status": "ok", "without_vector": 0}


@pytest.mark.sqlite_only("fills the database with SQLite's PRAGMA max_page_count")
def test_a_full_database_is_a_507_and_stores_nothing(tmp_path: Path) -> None:
    memory = Memory(tmp_path / "m.db", embedder=HashEmbedder(), workers=0)
    memory.add("warm up", user_id="alice")
    writer = memory.store._writer  # type: ignore[attr-defined]
    pages = writer.execute("PRAGMA page_count").fetchone()[0]
    writer.execute(f"PRAGMA max_page_count = {pages}")  # SQLite's own "database or disk is full"
    with pytest.raises(StoreError) as raised:
        memory.add("tea " * 5000, user_id="alice")
    assert raised.value.fields.get("disk_full") and "full" in raised.value.message
    with running(tmp_path / "m.db", HashEmbedder(), engine=memory) as server, server.http() as http:
        reply = http.post("/v1/memories", json={"text": "tea " * 5000, "user_id": "alice"})
        assert reply.status_code == 507, reply.text
        assert "full" in reply.json()["detail"]
        assert memory.get_all(user_id="alice").total == 1


def _private_tmpfs() -> list[str] | None:
    """A command prefix that runs its command with a 2 MB tmpfs at $DIR in a private mount
    namespace (root, or unprivileged user namespaces), or None where that is not allowed."""
    if shutil.which("unshare") is None:
        return None
    probe = subprocess.run(
        ["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=2m tmpfs /mnt"],
        capture_output=True,
        check=False,
    )
    return None if probe.returncode else ["unshare", "-rm", "sh", "-c"]


@pytest.mark.sqlite_only("fills the filesystem of the SQLite file (a server's disk is its own)")
def test_a_full_filesystem_is_a_507_with_a_clear_message(tmp_path: Path) -> None:
    prefix = _private_tmpfs()
    if prefix is None:
        pytest.skip("cannot mount a private tmpfs here (needs unshare and user namespaces)")
    folder = tmp_path / "tiny"
    folder.mkdir()
    child = Path(__file__).with_name("disk_full_child.py")
    mount = f'mount -t tmpfs -o size=2m tmpfs "{folder}"'
    script = f'{mount} && exec "{sys.executable}" "{child}" "{folder}"'
    done = subprocess.run(
        [*prefix, script],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    refused, stored = (json.loads(line) for line in done.stdout.splitlines()[-2:])
    assert refused["status"] == 507 and "disk" in refused["body"]["detail"]
    assert stored["stored"] == refused["added"]  # the refused request stored nothing


def test_probing_health_rechecks_the_file_at_most_once_a_minute(tmp_path: Path) -> None:
    """Any tenant's key may probe (``/health?probe=true``) and a check reads the whole file: the
    probes after the first, within a minute, report its result instead of reading it again."""
    with Memory(tmp_path / "m.db", embedder=HashEmbedder(), workers=0) as memory:
        memory.add("tea", user_id="alice")
        service = memory.engine.services.maintenance
        reads = service._admin_reads
        rechecks: list[bool] = []

        class Counting:
            def __getattr__(self, name: str) -> Any:
                return getattr(reads, name)

            def integrity(self, *, recheck: bool, max_seconds: float) -> list[str] | None:
                rechecks.append(recheck)
                return reads.integrity(recheck=recheck, max_seconds=max_seconds)

        service._admin_reads = Counting()  # type: ignore[assignment]  # the real reads, counted
        reports = [memory.health(probe_embedder=True)["store"] for _ in range(3)]
    assert rechecks == [True, False, False]
    assert [r["integrity"] for r in reports] == ["ok", "ok", "ok"]
