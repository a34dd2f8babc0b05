"""Format versions: version 2 added schedules and scope configs; a version 1 file (written
before them) still imports, a file newer than this omoide reads is refused before any write,
and a tenant's schedule or config the store holds already is kept as it is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from omoide import Memory
from omoide.embed import HashEmbedder
from omoide.errors import InvalidInput
from omoide.store.ports.schedules import Schedule
from tests.transfer.seed import ALICE, fill

NEW_KINDS = {"schedule", "scope_config"}


@pytest.fixture
def exported(tmp_path: Path) -> Path:
    out = tmp_path / "export.jsonl"
    with Memory(tmp_path / "source.db", embedder=HashEmbedder(), workers=0) as source:
        fill(source)
        source.export(out)
    return out


def _fresh(path: Path) -> Memory:
    return Memory(path, embedder=HashEmbedder(), workers=0)


def _rewrite(source: Path, dest: Path, version: int, keep: set[str] | None = None) -> Path:
    """``source`` with header version ``version`` and only the records of kinds ``keep``."""
    lines = [json.loads(line) for line in source.read_text().splitlines()]
    header, records = {**lines[0], "version": version}, lines[1:]
    kept = [r for r in records if keep is None or r["kind"] in keep]
    dest.write_text("".join(json.dumps(r) + "\n" for r in [header, *kept]))
    return dest


def test_a_version_1_file_still_imports(exported: Path, tmp_path: Path) -> None:
    body = exported.read_text().splitlines()[1:]
    old_kinds = {json.loads(line)["kind"] for line in body} - NEW_KINDS
    old = _rewrite(exported, tmp_path / "v1.jsonl", 1, old_kinds)
    with _fresh(tmp_path / "target.db") as target:
        report = target.import_file(old)
        assert set(report.records) == old_kinds and report.total == len(body) - 3
        assert target.store.schedules.list_schedules(None, None) == []
        target.export(tmp_path / "again.jsonl")
    again = (tmp_path / "again.jsonl").read_text().splitlines()
    assert json.loads(again[0])["version"] == 2
    assert again[1:] == [line for line in body if json.loads(line)["kind"] not in NEW_KINDS]


def test_a_version_1_file_holds_no_schedules(exported: Path, tmp_path: Path) -> None:
    mislabelled = _rewrite(exported, tmp_path / "v1.jsonl", 1, NEW_KINDS)
    with _fresh(tmp_path / "target.db") as target:
        with pytest.raises(InvalidInput, match="no schedule records in format version 1"):
            target.import_file(mislabelled)
        assert target.store.schedules.list_schedules(None, None) == []


def test_a_newer_version_is_refused_before_writing(exported: Path, tmp_path: Path) -> None:
    newer = _rewrite(exported, tmp_path / "v3.jsonl", 3)
    with _fresh(tmp_path / "target.db") as target:
        with pytest.raises(InvalidInput, match="version 3; this omoide reads 1, 2"):
            target.import_file(newer)
        assert target.store.admin.stats()["memories"] == 0


def test_a_schedule_or_config_the_store_holds_is_kept(exported: Path, tmp_path: Path) -> None:
    mine = Schedule(ALICE, False, 5_000, 42, {"mine": True})
    with _fresh(tmp_path / "target.db") as target:
        with target.store.transaction() as tx:
            tx.schedules.put_schedule(mine, 7)
            tx.schedules.set_scope_config(ALICE, {"mine": 1}, 7)
        report = target.import_file(exported)
        assert report.skipped["schedule"] == 1 and report.records["schedule"] == 1  # bob's
        assert report.skipped["scope_config"] == 1 and report.records["scope_config"] == 0
        assert target.store.schedules.get_schedule(ALICE) == mine
        assert target.store.schedules.get_scope_config(ALICE) == {"mine": 1}
        again = target.import_file(exported)
        assert again.total == 0
