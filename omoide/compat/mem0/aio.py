"""mem0's ``AsyncMemory``: the same operations as ``Memory``, awaited.

    from omoide.compat.mem0 import AsyncMemory      # was: from mem0 import AsyncMemory

    memory = AsyncMemory()
    await memory.add(messages, user_id="alice")
    await memory.search("Where am I travelling?", filters={"user_id": "alice"})

Each call runs the shim's ``Memory`` method in a worker thread (``asyncio.to_thread``), so the
event loop keeps running while SQLite, the embedder and the LLM work; arguments, results and
errors are ``Memory``'s.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine, Mapping
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

from omoide.compat.mem0.config import settings_from_config
from omoide.compat.mem0.memory import Memory
from omoide.config import Settings, load_settings
from omoide.embed import Embedder
from omoide.llm import LLM
from omoide.memory import Memory as OmoideMemory

P = ParamSpec("P")
R = TypeVar("R")


def _awaited(
    method: Callable[Concatenate[Memory, P], R],
) -> Callable[Concatenate[AsyncMemory, P], Coroutine[Any, Any, R]]:
    """``method`` of the sync ``Memory``, awaited; ``wraps`` keeps its signature and help."""

    async def run(self: AsyncMemory, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return await asyncio.to_thread(method, self.sync, *args, **kwargs)

    functools.update_wrapper(run, method)
    return run


class AsyncMemory:
    """mem0's ``AsyncMemory`` API on an omoide store; ``sync`` is the ``Memory`` it awaits."""

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        memory: OmoideMemory | None = None,
        embedder: Embedder | None = None,
        llm: LLM | None = None,
        settings: Settings | None = None,
    ) -> None:
        self.sync = Memory(path, memory=memory, embedder=embedder, llm=llm, settings=settings)

    @property
    def omoide(self) -> OmoideMemory:
        return self.sync.omoide

    @classmethod
    async def from_config(cls, config_dict: Mapping[str, Any]) -> AsyncMemory:
        """An ``AsyncMemory`` from a mem0 config dict (awaited, as mem0's), mapped as
        ``Memory.from_config`` maps it."""
        settings, path = settings_from_config(config_dict, load_settings())
        return await asyncio.to_thread(cls, path, settings=settings)

    def close(self) -> None:
        self.sync.close()

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    add = _awaited(Memory.add)
    search = _awaited(Memory.search)
    get_all = _awaited(Memory.get_all)
    get = _awaited(Memory.get)
    update = _awaited(Memory.update)
    delete = _awaited(Memory.delete)
    delete_all = _awaited(Memory.delete_all)
    history = _awaited(Memory.history)
    reset = _awaited(Memory.reset)
