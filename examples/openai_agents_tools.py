# ruff: noqa: T201  (an example shows what it does by printing it)
"""An OpenAI Agents SDK agent with omoide's memory tools (``pip install 'omoide[agents]'``):
what it remembers in one run it recalls in the next, which starts without any history.

    omoide serve & python examples/openai_agents_tools.py --llm-url http://localhost:11434/v1 \
        --model qwen2.5:3b --omoide-url http://127.0.0.1:8000

The tools (``remember``, ``recall``, ``forget``, ``memory_context``) are bound to one user;
``AsyncClient`` awaits omoide on the agent's own event loop.
"""

from __future__ import annotations

import argparse
import asyncio

from agents import Agent, Model, OpenAIChatCompletionsModel, Runner, set_tracing_disabled
from openai import AsyncOpenAI

from omoide import AsyncClient
from omoide.integrations._calls import AnyMemory
from omoide.integrations.openai_agents import memory_tools

TURNS = [
    "Hi, I'm Mei. Please remember that I love jasmine tea.",
    "What tea should I buy? Check what you remember about me.",
]
INSTRUCTIONS = "You are a helpful assistant. Use your memory tools to remember and recall."


async def run(model: Model, memory: AnyMemory, user: str = "mei") -> list[str]:
    """Each turn is a separate run with no shared history: only omoide connects them."""
    set_tracing_disabled(True)  # the SDK would send traces to OpenAI otherwise
    agent = Agent(
        name="assistant",
        instructions=INSTRUCTIONS,
        model=model,
        tools=memory_tools(memory, user_id=user),
    )
    answers = []
    for question in TURNS:
        result = await Runner.run(agent, question)
        answers.append(str(result.final_output))
        print(f"user: {question}\nassistant: {answers[-1]}")
    return answers


async def main(args: argparse.Namespace) -> None:
    client = AsyncOpenAI(base_url=args.llm_url, api_key="none")
    model = OpenAIChatCompletionsModel(model=args.model, openai_client=client)
    async with AsyncClient(args.omoide_url) as memory:
        await run(model, memory)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--llm-url", default="http://localhost:11434/v1")
    parser.add_argument("--model", default="qwen2.5:3b")
    parser.add_argument("--omoide-url", default="http://127.0.0.1:8000")
    asyncio.run(main(parser.parse_args()))
