"""A vector is stored only for the text it was computed from (issue 15, item 3): an embed job
that read a memory's text before a concurrent ``update()`` must not put that old text's vector
over the new one's."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from omoide import Memory
from omoide.embed import HashEmbedder
from omoide.embed.remote import OpenAICompatEmbedder


class _UpdatingEmbedder:
    """A real HashEmbedder that runs ``hook`` once, the first time it is asked for ``text``:
    the concurrent update lands exactly between the job's read and its write."""

    def __init__(self, text: str, hook: Callable[[], None]) -> None:
        self._inner = HashEmbedder()
        self.name = self._inner.name
        self._text, self._hook = text, hook

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = self._inner.embed(texts)
        if self._text in texts:
            self._text = ""  # once
            self._hook()
        return vectors


def test_a_retried_embed_job_does_not_overwrite_a_newer_texts_vector(tmp_path: Path) -> None:
    down = OpenAICompatEmbedder("http://127.0.0.1:9/v1", "any", timeout=0.5)
    with Memory(tmp_path / "m.db", embedder=HashEmbedder(), workers=0) as memory:
        memory.embedder = down
        [item] = memory.add("penguins waddle on the ice", user_id="alice")  # queued
        memory.embedder = HashEmbedder()

        def update() -> None:
            memory.update(item.id, "giraffes eat acacia leaves", user_id="alice")

        memory.embedder = _UpdatingEmbedder("penguins waddle on the ice", update)
        memory.run_jobs()
        memory.embedder = HashEmbedder()
        assert memory.get(item.id, user_id="alice").text == "giraffes eat acacia leaves"
        [new] = memory.search("giraffes eat acacia leaves", user_id="alice", recipe="vector").hits
        assert new.signals["vector"].score > 0.999  # the vector of the current text
        [old] = memory.search("penguins waddle on the ice", user_id="alice", recipe="vector").hits
        assert old.signals["vector"].score < 0.5
