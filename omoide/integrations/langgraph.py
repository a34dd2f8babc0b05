"""A LangGraph ``BaseStore`` kept in omoide (``pip install 'omoide[langgraph]'``).

Give it to a graph and its nodes and tools read and write omoide through LangGraph's own store
API, embedded (``Memory``) or over HTTP (``Client``)::

    from omoide import Memory
    from omoide.integrations.langgraph import OmoideStore

    store = OmoideStore(Memory(), user_id="mei")
    graph = create_react_agent(model, tools, store=store, checkpointer=InMemorySaver())
    store.put(("memories", "mei"), "tea", {"text": "Mei loves jasmine tea"})
    store.search(("memories",), query="what does Mei drink?")[0].value

Each item is one omoide memory of the store's tenant (``user_id``, ``scope_id``): its text is
what omoide indexes (the value's ``index`` fields, or the whole value as JSON), and its metadata
holds the namespace (a key prefix, one metadata field per level so that a namespace prefix is
an exact-match filter), the key and the value. ``search`` with a ``query`` is omoide's hybrid
search; a ``filter`` of top-level scalar values is an omoide metadata filter.

Not supported yet: TTLs; filter operators (``$gt``, ``$ne``, ...) and nested or list values in
a filter (``InvalidInput``); ``index=False`` still embeds the key as the memory's text (omoide
embeds every memory); a namespace chooses no tenant (one store, one tenant).
"""

from __future__ import annotations

import json
from collections.abc import Generator, Iterable
from typing import Any, TypeAlias, TypeVar, cast

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)
from langgraph.store.base.embed import get_text_at_path

from omoide.async_client import AsyncClient
from omoide.errors import InvalidInput
from omoide.integrations._calls import AnyMemory, call
from omoide.types import DEFAULT_ID, MemoryItem, Page, SearchFilters, SearchResult

TAG = "langgraph"  # every item the store writes carries it: the store's part of the tenant
NAMESPACE = "langgraph.namespace"
KEY = "langgraph.key"
VALUE = "langgraph.value"
_SCALARS = (str, int, float, bool, type(None))
_PAGE = 500
_T = TypeVar("_T")


def _level(i: int) -> str:
    return f"langgraph.ns.{i}"


def _field(name: str) -> str:
    return f"langgraph.field.{name}"


def _namespace_id(namespace: tuple[str, ...]) -> str:
    return json.dumps(list(namespace), ensure_ascii=False)


Request: TypeAlias = tuple[str, tuple[Any, ...], dict[str, Any]]
Steps: TypeAlias = Generator[Request, Any, _T]
"""An operation as the omoide calls it makes: it yields ``(method, args, kwargs)`` and is sent
each call's result, so the same code runs blocking (``batch``) and awaited (``abatch``)."""


class OmoideStore(BaseStore):
    """LangGraph's key-value store over omoide's memories of one tenant.

    ``memory`` is a ``Memory`` or a ``Client`` (``batch`` calls it; ``abatch`` runs it in a
    worker thread), or an ``AsyncClient`` (``abatch`` awaits it; async graphs only).
    ``index_fields`` are the value's paths whose text omoide embeds and indexes (LangGraph's
    ``index["fields"]`` syntax: ``"text"``, ``"a.b[*]"``); ``None`` indexes the whole value as
    JSON. A ``put`` may name other fields.
    """

    supports_ttl = False

    def __init__(
        self,
        memory: AnyMemory,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        index_fields: list[str] | None = None,
    ) -> None:
        self.memory = memory
        self.user_id, self.scope_id = user_id, scope_id
        self.index_fields = index_fields

    # BaseStore ---------------------------------------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run each operation in order: a later put in the batch sees an earlier one."""
        if isinstance(self.memory, AsyncClient):
            raise InvalidInput("an OmoideStore over an AsyncClient has only the async methods")
        return [self._blocking(self._run(op)) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """``batch`` without blocking the event loop."""
        return [await self._awaited(self._run(op)) for op in ops]

    def _blocking(self, steps: Steps[_T]) -> _T:
        try:
            method, args, kwargs = next(steps)
            while True:
                reply = getattr(self.memory, method)(*args, **kwargs)
                method, args, kwargs = steps.send(reply)
        except StopIteration as done:
            return cast(_T, done.value)

    async def _awaited(self, steps: Steps[_T]) -> _T:
        try:
            method, args, kwargs = next(steps)
            while True:
                reply = await call(self.memory, method, *args, **kwargs)
                method, args, kwargs = steps.send(reply)
        except StopIteration as done:
            return cast(_T, done.value)

    def _run(self, op: Op) -> Steps[Result]:
        if isinstance(op, GetOp):
            found = yield from self._find(op.namespace, op.key)
            return None if found is None else _item(found)
        if isinstance(op, PutOp):
            yield from self._put(op)
            return None
        if isinstance(op, SearchOp):
            return (yield from self._search(op))
        if isinstance(op, ListNamespacesOp):
            return (yield from self._list_namespaces(op))
        raise InvalidInput(f"unknown store operation: {type(op).__name__}")

    # operations --------------------------------------------------------------------------
    def _call(self, method: str, *args: Any, **kwargs: Any) -> Request:
        return method, args, kwargs | {"user_id": self.user_id, "scope_id": self.scope_id}

    def _find(self, namespace: tuple[str, ...], key: str) -> Steps[MemoryItem | None]:
        exact = {TAG: True, NAMESPACE: _namespace_id(namespace), KEY: key}
        page: Page = yield self._call("get_all", filters=SearchFilters(metadata=exact), limit=1)
        return page.items[0] if page.items else None

    def _put(self, op: PutOp) -> Steps[None]:
        found = yield from self._find(op.namespace, op.key)
        if op.value is None:
            if found is not None:
                yield self._call("delete", found.id)
            return
        value = dict(op.value)
        text = self._text(op.key, value, op.index)
        metadata = _metadata(op.namespace, op.key, value)
        if found is None:
            yield self._call("add", text, metadata=metadata, infer=False)
        else:
            yield self._call("update", found.id, text, metadata)

    def _text(self, key: str, value: dict[str, Any], index: Any) -> str:
        if index is False:
            return key
        fields = index if isinstance(index, list) else self.index_fields
        if fields is None:
            return json.dumps(value, ensure_ascii=False)
        texts = [t for path in fields for t in get_text_at_path(value, path) if t.strip()]
        return "\n".join(texts) or key

    def _search(self, op: SearchOp) -> Steps[list[SearchItem]]:
        metadata: dict[str, Any] = {TAG: True}
        metadata |= {_level(i): part for i, part in enumerate(op.namespace_prefix)}
        metadata |= _value_filter(op.filter or {})
        filters = SearchFilters(metadata=metadata)
        if op.query:
            limit = op.offset + op.limit
            hits: SearchResult = yield self._call("search", op.query, filters=filters, limit=limit)
            return [_hit(h.memory, h.score) for h in hits.hits[op.offset : limit]]
        page: Page = yield self._call("get_all", filters=filters, limit=op.limit, offset=op.offset)
        return [_hit(m, None) for m in page.items]

    def _list_namespaces(self, op: ListNamespacesOp) -> Steps[list[tuple[str, ...]]]:
        found: set[tuple[str, ...]] = set()
        mine = SearchFilters(metadata={TAG: True})
        offset = 0
        while True:
            page: Page = yield self._call("get_all", filters=mine, limit=_PAGE, offset=offset)
            found |= {tuple(json.loads(m.metadata[NAMESPACE])) for m in page.items}
            offset += len(page.items)
            if not page.items or offset >= page.total:
                break
        conditions = op.match_conditions or ()
        kept = [ns for ns in found if all(_matches(c, ns) for c in conditions)]
        if op.max_depth is not None:
            kept = list({ns[: op.max_depth] for ns in kept})
        return sorted(kept)[op.offset : op.offset + op.limit]


def _metadata(namespace: tuple[str, ...], key: str, value: dict[str, Any]) -> dict[str, Any]:
    metadata: dict[str, Any] = {TAG: True, NAMESPACE: _namespace_id(namespace), KEY: key}
    metadata |= {_level(i): part for i, part in enumerate(namespace)}
    metadata |= {_field(k): v for k, v in value.items() if isinstance(v, _SCALARS)}
    metadata[VALUE] = json.dumps(value, ensure_ascii=False)
    return metadata


def _value_filter(wanted: dict[str, Any]) -> dict[str, Any]:
    """LangGraph's value filter as omoide metadata filters: equality on top-level scalars."""
    out: dict[str, Any] = {}
    for name, expected in wanted.items():
        if isinstance(expected, dict) and set(expected) == {"$eq"}:
            expected = expected["$eq"]
        if not isinstance(expected, _SCALARS):
            raise InvalidInput(
                f"filter {name!r}: only equality with a string, number, bool or None is "
                "supported by the omoide store"
            )
        out[_field(name)] = expected
    return out


def _item(memory: MemoryItem) -> Item:
    metadata = memory.metadata
    return Item(
        namespace=tuple(json.loads(metadata[NAMESPACE])),
        key=str(metadata[KEY]),
        value=json.loads(metadata[VALUE]),
        created_at=memory.created_at,
        updated_at=memory.updated_at,
    )


def _hit(memory: MemoryItem, score: float | None) -> SearchItem:
    item = _item(memory)
    return SearchItem(
        item.namespace, item.key, item.value, item.created_at, item.updated_at, score=score
    )


def _matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    elif condition.match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    else:
        raise InvalidInput(f"unknown namespace match type: {condition.match_type!r}")
    return all(want in ("*", part) for part, want in pairs)


__all__ = ["OmoideStore"]
