"""Encryption at rest with ``INDEX_BACKEND=file`` warns that the markdown files are plaintext
(issue 36, finding 12), whoever opens the memory: the library and ``omoide serve``."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from omoide import Memory
from omoide.config import Settings
from omoide.embed import HashEmbedder
from omoide.serve.server import startup_warnings


def _settings(tmp_path: Path, files: bool) -> Settings:
    extra = {"index_backend": "file", "file_memory_data_dir": tmp_path / "md"} if files else {}
    return Settings(encryption_key="a long enough secret passphrase", **extra)


@pytest.mark.parametrize("files", [True, False])
def test_encrypted_memory_with_markdown_files_warns(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, files: bool
) -> None:
    settings = _settings(tmp_path, files)
    with caplog.at_level(logging.WARNING, logger="omoide"):
        memory = Memory(tmp_path / "e.db", embedder=HashEmbedder(), settings=settings, workers=0)
        memory.close()
    warned = [r for r in caplog.records if "plaintext" in r.getMessage()]
    assert bool(warned) is files
    said = " ".join(startup_warnings(settings))
    assert ("plaintext markdown" in said) is files
