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
from omoide.store import open_store

log = logging.getLogger("omoide")


class Memory(Engine):
    """An engine over a local SQLite file.

    ``path`` defaults to ``~/.omoide/omoide.db``; ``embedder`` to all-MiniLM-L6-v2 on the CPU,
    loaded on first use. Construction only opens (and if new, creates) the store.
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        embedder: Embedder | None = None,
        settings: Settings | None = None,
        workers: int | None = None,
    ) -> None:
        settings = settings or Settings()
        db_path = Path(path).expanduser() if path is not None else settings.db_path
        log.info("omoide store: %s", db_path)
        super().__init__(
            open_store(db_path),
            embedder or build_embedder(settings),
            recipe=settings.search_recipe,
            max_text_chars=settings.max_text_chars,
            workers=settings.workers if workers is None else workers,
        )
        self.settings = settings

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
