# ruff: noqa: T201  (an example shows what it does by printing it)
"""An OpenAI Agents SDK agent (``pip install openai-agents``) that remembers with omoide, through
the library, the HTTP client or MCP (``--via``).

    python examples/agents_sdk.py --via library --llm-url http://localhost:11434/v1 \
        --model qwen2.5:3b
    omoide serve & python examples/agents_sdk.py --via http --omoide-url http://127.0.0.1:8000
    python examples/agents_sdk.py --via mcp          # starts `omoide mcp` itself (stdio)

Before each turn the agent's instructions get what omoide recalls for the question; after it,
the exchange is stored. The agent also has a ``recall`` tool (library and HTTP) or omoide's MCP
tools (``search_memories``, ``add_messages``, ...: the SDK lists them from the server), which a
model that calls tools uses for more.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, set_tracing_disabled
from agents.mcp import MCPServer, MCPServerStdio
from openai import AsyncOpenAI

from omoide import Client, Memory

TURNS = ["Hi, I'm Mei. I live in Lisbon and I love jasmine tea.", "What tea should I buy?"]
INSTRUCTIONS = "You are a helpful assistant. What you remember about the user:\n{remembered}"

Recall = Callable[[str], Awaitable[str]]
Store = Callable[[str, str], Awaitable[None]]


class Backend:
    """How this agent reaches omoide: ``recall(question)``, ``store(question, answer)``, and
    the tools or MCP servers it gives the agent."""

    def __init__(
        self, recall: Recall, store: Store, tools: list[Any], servers: list[MCPServer]
    ) -> None:
        self.recall, self.store, self.tools, self.servers = recall, store, tools, servers


def _exchange(question: str, answer: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]


def _direct(memory: Memory | Client, user: str) -> Backend:
    """The library and the HTTP client have the same methods."""

    async def recall(question: str) -> str:
        hits = memory.search(question, user_id=user, limit=5).hits
        return "\n".join(f"- {hit.memory.text}" for hit in hits)

    async def store(question: str, answer: str) -> None:
        memory.add(_exchange(question, answer), user_id=user, session_id="agents-sdk")

    @function_tool
    async def recall_tool(query: str) -> str:
        """Search what is remembered about the user."""
        return await recall(query)

    return Backend(recall, store, [recall_tool], [])


def _mcp(server: MCPServerStdio, user: str) -> Backend:
    async def call(tool: str, arguments: dict[str, Any]) -> Any:
        result = await server.call_tool(tool, arguments)
        if result.is_error:
            raise RuntimeError(f"{tool}: {result.content}")
        return result.structured_content

    async def recall(question: str) -> str:
        found = await call("get_context", {"query": question, "user_id": user, "token_budget": 800})
        return str(found["text"])

    async def store(question: str, answer: str) -> None:
        arguments = {"messages": _exchange(question, answer), "user_id": user}
        await call("add_messages", arguments | {"session_id": "agents-sdk"})

    return Backend(recall, store, [], [server])


@asynccontextmanager
async def backend(args: argparse.Namespace) -> AsyncIterator[Backend]:
    if args.via == "library":
        with Memory(args.db) as memory:
            yield _direct(memory, args.user)
    elif args.via == "http":
        with Client(args.omoide_url, api_key=os.environ.get("MEMORY_API_KEY")) as client:
            yield _direct(client, args.user)
    else:
        db = ["--db", args.db] if args.db else []
        params = {"command": sys.executable, "args": ["-m", "omoide", *db, "mcp"]}
        async with MCPServerStdio(params | {"env": dict(os.environ)}, name="omoide") as server:
            yield _mcp(server, args.user)


async def run(args: argparse.Namespace) -> None:
    set_tracing_disabled(True)  # the SDK would send traces to OpenAI otherwise
    client = AsyncOpenAI(base_url=args.llm_url, api_key=os.environ.get("OPENAI_API_KEY", "none"))
    model = OpenAIChatCompletionsModel(model=args.model, openai_client=client)
    async with backend(args) as omoide:
        agent = Agent(name="assistant", model=model, tools=omoide.tools, mcp_servers=omoide.servers)
        for question in TURNS:
            remembered = await omoide.recall(question)
            turn = agent.clone(instructions=INSTRUCTIONS.format(remembered=remembered))
            result = await Runner.run(turn, question)
            answer = str(result.final_output)
            await omoide.store(question, answer)
            print(f"user: {question}\nassistant: {answer}")
        recalled = await omoide.recall("which tea does Mei love?")
        print(f"recalled: {' '.join(recalled.split())[:300]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--via", choices=["library", "http", "mcp"], default="library")
    parser.add_argument("--llm-url", default="http://localhost:11434/v1")
    parser.add_argument("--model", default="qwen2.5:3b")
    parser.add_argument("--omoide-url", default="http://127.0.0.1:8000")
    parser.add_argument("--db", default=None, help="database of the library or MCP server")
    parser.add_argument("--user", default="mei")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
