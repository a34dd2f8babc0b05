"""``OmoideStore`` behaves as LangGraph's ``BaseStore`` promises (langgraph ships no store test
suite, so these follow ``InMemoryStore``'s documented behaviour), over ``Memory`` and over a
live server, and a real ``create_react_agent`` graph recalls in one thread what it stored in
another."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.store.base import GetOp, PutOp

from omoide import AsyncClient, InvalidInput
from omoide.integrations.langgraph import OmoideStore
from omoide.interface import MemoryAPI
from tests.api.conftest import Running
from tests.integrations.examples import example


@pytest.fixture
def store(backend: MemoryAPI) -> OmoideStore:
    return OmoideStore(backend, user_id="mei")


def test_put_get_update_delete(store: OmoideStore) -> None:
    assert store.get(("prefs", "mei"), "tea") is None
    store.put(("prefs", "mei"), "tea", {"text": "Mei loves jasmine tea", "rank": 1})
    first = store.get(("prefs", "mei"), "tea")
    assert first is not None
    assert (first.namespace, first.key) == (("prefs", "mei"), "tea")
    assert first.value == {"text": "Mei loves jasmine tea", "rank": 1}
    store.put(("prefs", "mei"), "tea", {"text": "Mei now prefers oolong", "rank": 2})
    second = store.get(("prefs", "mei"), "tea")
    assert second is not None and second.value["text"] == "Mei now prefers oolong"
    assert second.created_at == first.created_at and second.updated_at >= first.updated_at
    assert len(store.search(("prefs",))) == 1  # an update, not a second item
    store.delete(("prefs", "mei"), "tea")
    assert store.get(("prefs", "mei"), "tea") is None
    store.delete(("prefs", "mei"), "tea")  # deleting what is gone is not an error


def test_namespaces_keep_keys_apart(store: OmoideStore) -> None:
    store.put(("a",), "k", {"n": 1})
    store.put(("a", "b"), "k", {"n": 2})
    store.put(("b",), "k", {"n": 3})
    assert [store.get(ns, "k").value["n"] for ns in [("a",), ("a", "b"), ("b",)]] == [1, 2, 3]  # type: ignore[union-attr]
    assert sorted(i.value["n"] for i in store.search(("a",))) == [1, 2]
    assert [i.value["n"] for i in store.search(("a", "b"))] == [2]


def test_search_by_query_filter_and_page(store: OmoideStore) -> None:
    notes = {
        "tea": {"text": "Mei loves jasmine tea", "kind": "drink", "fav": True},
        "city": {"text": "Mei lives in Lisbon", "kind": "place", "fav": False},
        "cafe": {"text": "Mei's cafe serves coffee", "kind": "drink", "fav": False},
    }
    for key, value in notes.items():
        store.put(("memories", "mei"), key, value)
    store.put(("other",), "tea", {"text": "jasmine tea elsewhere", "kind": "drink"})
    found = store.search(("memories",), query="jasmine tea", limit=2)
    assert found[0].key == "tea" and found[0].score is not None
    assert all(i.namespace == ("memories", "mei") for i in found)
    drinks = store.search(("memories",), filter={"kind": "drink"}, limit=10)
    assert sorted(i.key for i in drinks) == ["cafe", "tea"]
    assert [i.key for i in store.search(("memories",), filter={"fav": {"$eq": True}})] == ["tea"]
    pages = [store.search(("memories",), limit=1, offset=n) for n in range(4)]
    assert sorted(p[0].key for p in pages[:3]) == sorted(notes) and pages[3] == []
    with pytest.raises(InvalidInput, match="only equality"):
        store.search(("memories",), filter={"rank": {"$gt": 1}})


def test_list_namespaces(store: OmoideStore) -> None:
    for ns in [("memories", "mei"), ("memories", "bo"), ("docs", "mei", "v1"), ("docs", "x")]:
        store.put(ns, "k", {"text": "x"})
    assert store.list_namespaces(prefix=("memories",)) == [("memories", "bo"), ("memories", "mei")]
    assert store.list_namespaces(suffix=("mei",)) == [("memories", "mei")]
    assert store.list_namespaces(prefix=("*", "mei")) == [
        ("docs", "mei", "v1"),
        ("memories", "mei"),
    ]
    assert store.list_namespaces(max_depth=1) == [("docs",), ("memories",)]
    assert store.list_namespaces(limit=1, offset=1) == [("docs", "x")]


def test_index_fields_choose_what_is_searched(backend: MemoryAPI) -> None:
    store = OmoideStore(backend, user_id="mei", index_fields=["title"])
    store.put(("d",), "1", {"title": "jasmine tea", "body": "ignored words zebra"})
    store.put(("d",), "2", {"title": "zebra", "body": "jasmine tea"}, index=["body"])
    store.put(("d",), "3", {"title": "unindexed"}, index=False)
    texts = {m.metadata["langgraph.key"]: m.text for m in backend.get_all(user_id="mei").items}
    assert texts == {"1": "jasmine tea", "2": "jasmine tea", "3": "3"}


def test_tenants_do_not_see_each_other(backend: MemoryAPI) -> None:
    mei, bo = OmoideStore(backend, user_id="mei"), OmoideStore(backend, user_id="bo")
    mei.put(("memories",), "tea", {"text": "jasmine"})
    assert bo.get(("memories",), "tea") is None
    assert bo.search(("memories",), query="jasmine") == []
    assert bo.list_namespaces() == []
    backend.add("a plain memory, not the store's", user_id="mei")
    assert len(mei.search((), limit=10)) == 1


def test_abatch_runs_the_operations_in_order(store: OmoideStore) -> None:
    ops = [
        PutOp(("n",), "k", {"v": 1}),
        GetOp(("n",), "k"),
        PutOp(("n",), "k", None),
        GetOp(("n",), "k"),
    ]
    results = asyncio.run(store.abatch(ops))
    assert results[0] is None and results[1].value == {"v": 1}  # type: ignore[union-attr]
    assert results[3] is None


class ScriptedChatModel(GenericFakeChatModel):
    """LangChain's fake chat model, replying from a script, that accepts tools."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:  # noqa: ARG002
        return self


def _call(name: str, **args: str) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"call-{name}"}])


@pytest.mark.filterwarnings("ignore::langgraph.warnings.LangGraphDeprecatedSinceV10")
def test_react_agent_recalls_in_another_thread(backend: MemoryAPI) -> None:
    """examples/langgraph_store.py with a scripted model: thread 2 recalls what thread 1 stored."""
    script = [
        _call("remember", text="Mei loves jasmine tea"),
        AIMessage("Noted!"),
        _call("recall", query="which tea does Mei like?"),
        AIMessage("Buy jasmine tea."),
    ]
    first, second = example("langgraph_store").run(
        ScriptedChatModel(messages=iter(script)), backend
    )
    assert "jasmine" not in str([m.content for m in second["messages"][:1]])  # a new thread
    recalled = [m for m in second["messages"] if isinstance(m, ToolMessage)]
    assert len(recalled) == 1 and "Mei loves jasmine tea" in str(recalled[0].content)
    stored = backend.search("jasmine tea", user_id="mei").hits[0].memory
    assert stored.metadata["langgraph.namespace"] == '["memories", "mei"]'
    assert len(first["messages"]) == 4  # user, tool call, tool result, answer


def test_async_methods_await_an_async_client(live: Running) -> None:
    """Over an ``AsyncClient`` the store's async methods await omoide on the graph's loop."""

    async def run() -> None:
        async with AsyncClient(live.url) as memory:
            store = OmoideStore(memory, user_id="mei")
            await store.aput(("memories", "mei"), "tea", {"text": "Mei loves jasmine tea"})
            await store.aput(("memories", "mei"), "city", {"text": "Mei lives in Lisbon"})
            item = await store.aget(("memories", "mei"), "tea")
            assert item is not None and item.value == {"text": "Mei loves jasmine tea"}
            found = await store.asearch(("memories",), query="jasmine tea", limit=1)
            assert [i.key for i in found] == ["tea"]
            assert await store.alist_namespaces() == [("memories", "mei")]
            await store.adelete(("memories", "mei"), "tea")
            assert await store.aget(("memories", "mei"), "tea") is None
            with pytest.raises(InvalidInput, match="only the async methods"):
                store.get(("memories", "mei"), "city")

    asyncio.run(run())
    left = live.engine.get_all(user_id="mei").items
    assert [m.metadata["langgraph.key"] for m in left] == ["city"]
