# ruff: noqa: T201  (an example shows what it does by printing it)
"""A LangGraph agent whose long-term memory is omoide (``pip install 'omoide[langgraph]'
langchain-openai``): what it stores in one conversation thread it recalls in another.

    python examples/langgraph_store.py --llm-url http://localhost:11434/v1 --model qwen2.5:3b
    omoide serve & python examples/langgraph_store.py --omoide-url http://127.0.0.1:8000

The graph is LangGraph's prebuilt ReAct agent; its ``remember`` and ``recall`` tools reach the
store with ``get_store()``, in a namespace per user. Threads (the checkpointer's short-term
memory) are separate; the store is what they share.
"""

from __future__ import annotations

import argparse
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.config import get_config, get_store
from langgraph.prebuilt import create_react_agent

from omoide import Client, Memory
from omoide.integrations.langgraph import OmoideStore
from omoide.interface import MemoryAPI

TURNS = [
    ("thread-1", "Hi, I'm Mei. Please remember that I love jasmine tea."),
    ("thread-2", "What tea should I buy?"),
]


def _namespace() -> tuple[str, str]:
    return ("memories", str(get_config()["configurable"]["user_id"]))


@tool
def remember(text: str) -> str:
    """Store a fact about the user for later conversations."""
    store = get_store()
    key = str(len(store.search(_namespace(), limit=1000)) + 1)
    store.put(_namespace(), key, {"text": text})
    return f"remembered: {text}"


@tool
def recall(query: str) -> str:
    """Search what is remembered about the user."""
    found = get_store().search(_namespace(), query=query, limit=5)
    return "\n".join(f"- {item.value['text']}" for item in found) or "nothing remembered"


def run(model: BaseChatModel, memory: MemoryAPI, user: str = "mei") -> list[dict[str, Any]]:
    """Each turn in its own thread; returns the final state of each."""
    store = OmoideStore(memory, user_id=user)
    graph = create_react_agent(model, [remember, recall], store=store, checkpointer=InMemorySaver())
    states = []
    for thread, question in TURNS:
        config = {"configurable": {"thread_id": thread, "user_id": user}}
        state = graph.invoke({"messages": [("user", question)]}, config)
        print(f"[{thread}] user: {question}\n[{thread}] assistant: {state['messages'][-1].content}")
        states.append(state)
    return states


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--llm-url", default="http://localhost:11434/v1")
    parser.add_argument("--model", default="qwen2.5:3b")
    parser.add_argument("--omoide-url", default=None, help="a server; default: embedded")
    args = parser.parse_args()
    from langchain_openai import ChatOpenAI  # any LangChain chat model that calls tools

    model = ChatOpenAI(base_url=args.llm_url, model=args.model, api_key="none")
    with Client(args.omoide_url) if args.omoide_url else Memory() as memory:
        run(model, memory)


if __name__ == "__main__":
    main()
