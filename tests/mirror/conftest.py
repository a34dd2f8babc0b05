"""The markdown mirror (INDEX_BACKEND=file) over real files, a real SQLite file and, for the
process tests, real subprocesses."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from omoide import Memory
from omoide.config import Settings
from omoide.embed import HashEmbedder
from omoide.embed.protocol import Embedder

BOUND_S = 60.0
USER = "alice"


def mirrored_settings(root: Path) -> Settings:
    return Settings(index_backend="file", file_memory_data_dir=root)


def open_memory(db: Path, root: Path, embedder: Embedder | None = None) -> Memory:
    return Memory(
        db, embedder=embedder or HashEmbedder(), settings=mirrored_settings(root), workers=0
    )


def until(condition: Callable[[], bool], what: str, bound: float = BOUND_S) -> None:
    """Wait for ``condition`` (polled), failing after a generous ``bound``."""
    deadline = time.monotonic() + bound
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def type_file(root: Path, name: str = "semantic_memory.md", user: str = USER) -> Path:
    return root / "memories" / user / "default" / name


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "file_memory_data"


@pytest.fixture
def open_mirrored(tmp_path: Path, root: Path) -> Iterator[Callable[..., Memory]]:
    """``open_mirrored(watch=False)``: a Memory with the mirror; closed at teardown."""
    with ExitStack() as stack:

        def start(watch: bool = True) -> Memory:
            memory = stack.enter_context(open_memory(tmp_path / "omoide.db", root))
            if not watch:
                mirror = memory.engine.services.mirror
                assert mirror is not None
                mirror.stop()
            return memory

        yield start
