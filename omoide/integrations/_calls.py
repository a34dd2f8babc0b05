"""One way for the async side of an integration to call any omoide: an ``AsyncClient`` is
awaited, a ``Memory`` or ``Client`` runs in a worker thread, so the event loop never blocks."""

from __future__ import annotations

import asyncio
from typing import Any, TypeAlias

from omoide.async_client import AsyncClient
from omoide.interface import MemoryAPI

AnyMemory: TypeAlias = MemoryAPI | AsyncClient


async def call(memory: AnyMemory, method: str, *args: Any, **kwargs: Any) -> Any:
    """``memory.<method>(*args, **kwargs)``, awaited without blocking the loop."""
    bound = getattr(memory, method)
    if isinstance(memory, AsyncClient):
        return await bound(*args, **kwargs)
    return await asyncio.to_thread(bound, *args, **kwargs)
