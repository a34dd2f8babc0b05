"""Checks every service runs on what it is about to store or bind into a query.

The HTTP layer checks whole requests (BodyGuard); these cover the library (``Memory.add``
called in-process) and anything else that reaches a service without passing through it.
"""

from __future__ import annotations

from collections.abc import Sequence

from omoide.store.protocol import NewMemory
from omoide.types import Message, Scope, SearchFilters
from omoide.validate import check_value


def check_scope(scope: Scope) -> None:
    """Ids are stored and echoed like any text: an unstorable one is refused up front."""
    check_value(scope.user_id, "user_id")
    check_value(scope.scope_id, "scope_id")


def check_writable(
    scope: Scope, records: Sequence[NewMemory], episode: list[Message] | None
) -> None:
    """Refuse, before anything is written, a string no reply could carry back (a lone
    surrogate, NUL) or a number SQLite cannot hold, anywhere in a write: once stored, such a
    value breaks every later list and search of the tenant. The HTTP layer checks whole
    requests; this covers the library (``Memory.add(metadata=...)`` in-process) and jobs."""
    check_scope(scope)
    for record in records:
        check_value(record.text, "text")
        check_value(record.metadata, "metadata")
        check_value(record.session_id, "session_id")
        check_value(record.context, "context")
    for index, message in enumerate(episode or []):
        check_value(message.role, f"messages.{index}.role")
        check_value(message.content, f"messages.{index}.content")


def check_filters(filters: SearchFilters | None) -> None:
    """Filters are bound into queries: the same check as a write's values."""
    if filters is not None:
        check_value(filters.model_dump(exclude_none=True), "filters")
