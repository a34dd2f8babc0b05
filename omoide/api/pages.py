"""``bounded_page``: a page of memories read a part at a time, refused as soon as it would
outgrow ``OMOIDE_MAX_RESPONSE_BYTES``, so a large ``limit`` of large memories never sits whole
in memory before being refused (``omoide.api.middleware.ResponseCap`` bounds what is sent)."""

from __future__ import annotations

from collections.abc import Callable

from omoide.errors import InvalidInput
from omoide.types import MemoryItem, Page

PART = 500  # memories read at once


def bounded_page(read: Callable[[int, int], Page], limit: int, offset: int, max_bytes: int) -> Page:
    """``read(limit, offset)`` called for parts of ``PART``; ``InvalidInput`` (422) naming the
    limit when the page's memories pass ``max_bytes``."""
    items: list[MemoryItem] = []
    size, total = 0, 0
    while len(items) < limit:
        part = read(min(PART, limit - len(items)), offset + len(items))
        total = part.total
        size += sum(len(item.model_dump_json()) for item in part.items)
        if size > max_bytes:
            raise InvalidInput(
                f"this page would pass {max_bytes} bytes (OMOIDE_MAX_RESPONSE_BYTES) after"
                f" {len(items)} memories: ask for a smaller limit",
                limit=max_bytes,
            )
        items.extend(part.items)
        if len(part.items) < PART:
            break
    return Page(items=items, total=total, limit=limit, offset=offset)
