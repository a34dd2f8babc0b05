# ruff: noqa: T201  (an example shows what it does by printing it)
"""The same agent talking to omoide over MCP: it starts ``omoide mcp`` itself (stdio) and
calls its tools, as Claude Code or any MCP host would.

    python examples/agent_mcp.py --llm-url http://localhost:11434/v1 --model qwen2.5:3b

``--mcp-url http://127.0.0.1:8000/mcp`` uses a running ``omoide serve`` instead (streamable
HTTP, no key). Tools used: ``get_context`` (what omoide knows for a question, within a token
budget), ``add_messages`` (store the exchange) and ``search_memories``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from typing import Any

from mcp import Client, StdioServerParameters
from openai import OpenAI

TURNS = ["Hi, I'm Mei. I live in Lisbon and I love jasmine tea.", "What tea should I buy?"]


def answer(chat: OpenAI, model: str, remembered: str, question: str) -> str:
    system = "You are a helpful assistant. What you remember about the user:\n" + remembered
    reply = chat.chat.completions.create(
        model=model,
        messages=[{"role": "system", "content": system}, {"role": "user", "content": question}],
    )
    return reply.choices[0].message.content or ""


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> Any:
    result = await client.call_tool(tool, arguments)
    if result.is_error:
        raise RuntimeError(f"{tool}: {result.content[0].text}")  # type: ignore[union-attr]
    return result.structured_content


async def run(args: argparse.Namespace) -> None:
    chat = OpenAI(base_url=args.llm_url, api_key="not-needed-locally")
    db = ["--db", args.db] if args.db else []
    server: Any = args.mcp_url or StdioServerParameters(
        command=sys.executable, args=["-m", "omoide", *db, "mcp"], env=dict(os.environ)
    )
    async with Client(server) as client:
        for question in TURNS:
            context = await call(
                client,
                "get_context",
                {"query": question, "user_id": args.user, "token_budget": 800},
            )
            text = answer(chat, args.model, context["text"], question)
            await call(
                client,
                "add_messages",
                {
                    "messages": [
                        {"role": "user", "content": question},
                        {"role": "assistant", "content": text},
                    ],
                    "user_id": args.user,
                    "session_id": "chat-1",
                },
            )
            print(f"user: {question}\nassistant: {text}")
        found = await call(
            client,
            "search_memories",
            {"query": "which tea does Mei love?", "user_id": args.user, "num": 1, "threshold": 0.0},
        )
        print(f"recalled: {json.dumps(found['results'][0], ensure_ascii=False)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--llm-url", default="http://localhost:11434/v1")
    parser.add_argument("--model", default="qwen2.5:3b")
    parser.add_argument("--mcp-url", default=None, help="a running server's /mcp (default: stdio)")
    parser.add_argument("--db", default=None, help="database of the stdio server")
    parser.add_argument("--user", default="mei")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
