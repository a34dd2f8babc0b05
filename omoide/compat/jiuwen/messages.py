"""JiuwenMemory's message log (upstream ``server/log_center_api.py``) over omoide's stored turns.

Every message ``/add_messages/`` stores is kept verbatim as a ``raw`` memory of the session it
was added to (with its role), and each call's exchange as an episode; these routes read them:

    POST /get_message_by_id/              a stored turn (or an episode: a page's source_id)
    POST /admin/messages/query            a page of turns, newest first (page_size <= 200)
    GET  /admin/messages/stats            total and count per role
    GET  /admin/messages/export           CSV, oldest first (limit <= 20,000)
    GET  /admin/messages/detail/{msg_id}  one turn with its tenant and session, or 404

Upstream's log is global; omoide never reads across tenants in one query, so these routes work
inside one tenant like every other: an omitted ``user_id`` / ``scope_id`` is ``"__default__"``
(or the bound key's tenant). Upstream leaves GET routes open; here they need the key.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field, field_validator

from omoide.api.deps import MemoryDep, TenancyDep
from omoide.compat.jiuwen.common import JiuwenRoute, failing_as, resolve_scope, wire
from omoide.errors import NotFound
from omoide.memory import Memory
from omoide.types import MemoryItem, MemoryType, Scope, SearchFilters

router = APIRouter(tags=["jiuwen"], route_class=JiuwenRoute)

MAX_QUERY_PAGE = 200
MAX_EXPORT = 20_000
BATCH = 10_000  # Engine.get_all's largest page
CSV_PAGE = 200  # turns of the export in memory at once
FORMULA_STARTS = frozenset("=+-@\t\r")
CSV_COLUMNS = ["message_id", "user_id", "scope_id", "session_id", "role", "timestamp", "content"]


class _Filter(BaseModel):
    model_config = ConfigDict(extra="ignore")

    scope_id: str | None = None
    user_id: str | None = None
    session_id: str | None = None
    start_time: datetime | None = Field(None, description="ISO 8601; without a zone, UTC.")
    end_time: datetime | None = Field(None, description="ISO 8601; without a zone, UTC.")

    @field_validator("start_time", "end_time")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        if value is not None and value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value

    def filters(self) -> SearchFilters:
        return SearchFilters(
            types=[MemoryType.RAW],
            session_id=self.session_id,
            created_after=self.start_time,
            created_before=self.end_time,
        )


class MessageQuery(_Filter):
    model_config = ConfigDict(
        extra="ignore",
        json_schema_extra={
            "examples": [
                {"user_id": "user_001", "scope_id": "demo", "page_idx": 1, "page_size": 20},
                {
                    "user_id": "user_001",
                    "scope_id": "demo",
                    "session_id": "chat-1",
                    "start_time": "2026-01-01T00:00:00Z",
                },
            ]
        },
    )

    # Clamped like upstream, within bounds that keep (page_idx - 1) * page_size a valid OFFSET.
    page_idx: int = Field(1, le=10**9, description="From 1; below 1 is 1.")
    page_size: int = Field(20, description="Clamped to 1..200.")
    exclude_scopes: list[str] | None = None


class ExportQuery(_Filter):
    limit: int = Field(5000, ge=-(2**63), le=2**63 - 1, description="Clamped to 1..20,000.")


class GetMessageRequest(BaseModel):
    model_config = ConfigDict(
        extra="ignore",
        json_schema_extra={
            "examples": [{"message_id": "3f2a...", "user_id": "user_001", "scope_id": "demo"}]
        },
    )

    message_id: str = Field(min_length=1)
    user_id: str | None = Field(None, description='omoide\'s addition; "__default__".')
    scope_id: str | None = Field(None, description='omoide\'s addition; "__default__".')


class FoundMessage(BaseModel):
    found: bool
    message_id: str
    role: str | None = None
    content: str | None = None
    timestamp: str | None = None


class MessageItem(BaseModel):
    message_id: str
    user_id: str
    scope_id: str
    session_id: str | None
    role: str
    content: str
    timestamp: str


class MessagePage(BaseModel):
    total: int
    page_idx: int
    page_size: int
    items: list[MessageItem]


class MessageStats(BaseModel):
    total: int
    by_role: dict[str, int]


def _item(memory: MemoryItem) -> MessageItem:
    return MessageItem(
        message_id=memory.id,
        user_id=wire(memory.user_id),
        scope_id=wire(memory.scope_id),
        session_id=memory.session_id,
        role=str(memory.metadata.get("role", "user")),
        content=memory.text,
        timestamp=memory.created_at.isoformat(),
    )


def _turn(engine: Memory, message_id: str, scope: Scope) -> MemoryItem | None:
    try:
        memory = engine.get(message_id, **scope.model_dump())
    except NotFound:
        return None
    return memory if memory.type is MemoryType.RAW else None


@router.post("/get_message_by_id/", response_model_exclude_none=True)
def get_message_by_id(
    body: GetMessageRequest, engine: MemoryDep, tenancy: TenancyDep
) -> FoundMessage:
    """A stored message by id: `found` false when the tenant has none. An episode id (the
    `source_id` of an extracted memory) gives its exchange, one `role: content` line each."""
    with failing_as("Error getting message"):
        scope = resolve_scope(tenancy, body.user_id, body.scope_id)
        if turn := _turn(engine, body.message_id, scope):
            role = str(turn.metadata.get("role", "user"))
            return FoundMessage(
                found=True,
                message_id=turn.id,
                role=role,
                content=turn.text,
                timestamp=turn.created_at.isoformat(),
            )
        try:
            episode = engine.get_episode(body.message_id, **scope.model_dump())
        except NotFound:
            return FoundMessage(found=False, message_id=body.message_id)
    lines = [f"{m.role}: {m.content}" for m in episode.messages]
    return FoundMessage(
        found=True,
        message_id=episode.id,
        role=episode.messages[0].role if episode.messages else "user",
        content=episode.messages[0].content if len(lines) == 1 else "\n".join(lines),
        timestamp=episode.created_at.isoformat(),
    )


@router.post("/admin/messages/query")
def query_messages(body: MessageQuery, engine: MemoryDep, tenancy: TenancyDep) -> MessagePage:
    """A page of the tenant's stored messages, newest first, filtered by session and time."""
    page_idx = max(1, body.page_idx)
    page_size = max(1, min(body.page_size, MAX_QUERY_PAGE))
    with failing_as("Error querying messages"):
        scope = resolve_scope(tenancy, body.user_id, body.scope_id)
        if scope.scope_id in (body.exclude_scopes or []):
            return MessagePage(total=0, page_idx=page_idx, page_size=page_size, items=[])
        page = engine.get_all(
            **scope.model_dump(),
            filters=body.filters(),
            limit=page_size,
            offset=(page_idx - 1) * page_size,
        )
    items = [_item(m) for m in page.items]
    return MessagePage(total=page.total, page_idx=page_idx, page_size=page_size, items=items)


def _all(
    engine: Memory, scope: Scope, filters: SearchFilters, skip: int = 0
) -> Iterator[MemoryItem]:
    """Every matching turn from ``skip`` on, newest first, a page of ``BATCH`` at a time."""
    offset = skip
    while True:
        page = engine.get_all(**scope.model_dump(), filters=filters, limit=BATCH, offset=offset)
        yield from page.items
        offset += len(page.items)
        if not page.items or offset >= page.total:
            return


@router.get("/admin/messages/stats")
def message_stats(
    query: Annotated[_Filter, Query()], engine: MemoryDep, tenancy: TenancyDep
) -> MessageStats:
    """How many messages the tenant has stored (filtered as `query` is), and per role."""
    with failing_as("Error counting messages"):
        scope = resolve_scope(tenancy, query.user_id, query.scope_id)
        roles = Counter(
            str(m.metadata.get("role", "user")) for m in _all(engine, scope, query.filters())
        )
    return MessageStats(total=sum(roles.values()), by_role=dict(roles))


@router.get(
    "/admin/messages/export",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/csv": {}}, "description": "The messages as CSV."}},
)
def export_messages(
    query: Annotated[ExportQuery, Query()], engine: MemoryDep, tenancy: TenancyDep
) -> StreamingResponse:
    """The tenant's oldest `limit` messages as CSV, oldest first (upstream's columns)."""
    limit = max(1, min(query.limit, MAX_EXPORT))
    with failing_as("Error exporting messages"):
        scope = resolve_scope(tenancy, query.user_id, query.scope_id)
        filters = query.filters()
        total = engine.get_all(**scope.model_dump(), filters=filters, limit=1).total
    return StreamingResponse(
        _csv(engine, scope, filters, total, min(limit, total)),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": "attachment; filename=messages_export.csv"},
    )


def _csv(
    engine: Memory, scope: Scope, filters: SearchFilters, total: int, count: int
) -> Iterator[str]:
    """The header, then the oldest ``count`` of ``total`` turns oldest first, read a page of
    ``CSV_PAGE`` at a time from the oldest end: a page in memory, not the whole export."""
    yield _csv_line(CSV_COLUMNS)
    end = total  # the turns listed newest first: index total - 1 is the oldest
    while end > total - count:
        start = max(total - count, end - CSV_PAGE)
        page = engine.get_all(
            **scope.model_dump(), filters=filters, limit=end - start, offset=start
        )
        if not page.items:
            return
        # a page per chunk: the server sends each chunk from a worker thread, and a line per
        # chunk made an export of 20,000 turns take seconds
        yield "".join(
            _csv_line([getattr(item, column) for column in CSV_COLUMNS])
            for item in map(_item, reversed(page.items))
        )
        end = start


def _csv_line(cells: Sequence[object]) -> str:
    out = io.StringIO()
    csv.writer(out).writerow([_inert(cell) for cell in cells])
    return out.getvalue()


def _inert(cell: object) -> object:
    """A text cell a spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@``, a tab or a
    carriage return first) gets a leading ``'``, as OWASP advises for CSV injection."""
    if isinstance(cell, str) and cell[:1] in FORMULA_STARTS:
        return "'" + cell
    return cell


@router.get("/admin/messages/detail/{msg_id}", responses={404: {"description": "No such one."}})
def message_detail(
    msg_id: str,
    engine: MemoryDep,
    tenancy: TenancyDep,
    user_id: str | None = None,
    scope_id: str | None = None,
) -> MessageItem:
    """One stored message with its tenant and session; 404 when the tenant has none."""
    with failing_as("Error getting message detail"):
        turn = _turn(engine, msg_id, resolve_scope(tenancy, user_id, scope_id))
        if turn is None:
            raise NotFound(f"message {msg_id} not found", id=msg_id)
    return _item(turn)
