"""Each integration runs over an embedded ``Memory`` and over a ``Client`` to a live server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from omoide import Client, Memory
from omoide.embed import HashEmbedder
from omoide.interface import MemoryAPI
from tests.api.conftest import Running, running


@pytest.fixture
def live(tmp_path: Path) -> Iterator[Running]:
    """A real omoide server on a loopback port, with the model-free embedder."""
    with running(tmp_path / "server.db", HashEmbedder()) as server:
        yield server


@pytest.fixture(params=["memory", "client"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MemoryAPI]:
    """``Memory`` (embedded) or ``Client`` (HTTP to a live server): the same calls."""
    if request.param == "memory":
        with Memory(tmp_path / "embedded.db", embedder=HashEmbedder(), workers=0) as memory:
            yield memory
    else:
        with running(tmp_path / "server.db", HashEmbedder()) as server, Client(server.url) as c:
            yield c
