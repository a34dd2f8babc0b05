"""``Memory``: the embedded library entry point.

>>> from omoide import Memory
>>> m = Memory(path="/tmp/demo.db")
>>> m.add("I like jasmine tea", user_id="alice")
>>> m.search("what does alice drink?", user_id="alice").hits[0].memory.text
'I like jasmine tea'
"""

from __future__ import annotations

import logging
from pathlib import Path

from omoide.config import Settings
from omoide.embed import Embedder, build_embedder
from omoide.engine import Engine
from omoide.llm import LLM, build_llm
from omoide.store import open_store

log = logging.getLogger("omoide")


class Memory(Engine):
    """An engine over a local SQLite file.

    ``path`` defaults to ``~/.omoide/omoide.db``; ``embedder`` to all-MiniLM-L6-v2 on the CPU,
    loaded on first use. ``llm`` is the model extraction uses; None builds the one the settings
    name (``OMOIDE_LLM_BASE_URL``, ``OMOIDE_LLM_MODEL``), or none, and extraction reports
    itself disabled. Construction only opens (and if new, creates) the store.

        >>> Memory(llm=OpenAICompatLLM("http://localhost:11434/v1", "qwen2.5:3b"))
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        embedder: Embedder | None = None,
        llm: LLM | None = None,
        settings: Settings | None = None,
        workers: int | None = None,
    ) -> None:
        settings = settings or Settings()
        db_path = Path(path).expanduser() if path is not None else settings.db_path
        log.info("omoide store: %s", db_path)
        built = build_llm(settings, timeout=settings.llm_timeout) if llm is None else None
        super().__init__(
            open_store(db_path),
            embedder or build_embedder(settings),
            llm=llm if llm is not None else built,
            max_llm_calls=settings.llm_max_calls_per_episode,
            recipe=settings.search_recipe,
            max_text_chars=settings.max_text_chars,
            workers=settings.workers if workers is None else workers,
        )
        self.settings = settings
        self._built_llm = built
        log.info("omoide LLM: %s", self.llm.name if self.llm else "none (extraction disabled)")

    def close(self) -> None:
        super().close()
        if self._built_llm is not None:
            self._built_llm.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
