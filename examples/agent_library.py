# ruff: noqa: T201  (an example shows what it does by printing it)
"""A chat agent that remembers, with omoide embedded as a library.

Each turn: omoide assembles what it knows for the question (profile, summary, relevant
memories, recent turns) within a token budget, the model answers with it in the system
prompt, and the exchange is stored for next time. Any OpenAI-compatible chat endpoint works:

    python examples/agent_library.py --llm-url http://localhost:11434/v1 --model qwen2.5:3b

Storing and recalling need no LLM; only the agent's own answers do. Set
OMOIDE_LLM_BASE_URL / OMOIDE_LLM_MODEL too if omoide should also extract facts.
"""

from __future__ import annotations

import argparse

from openai import OpenAI

from omoide import Memory

TURNS = ["Hi, I'm Mei. I live in Lisbon and I love jasmine tea.", "What tea should I buy?"]


def answer(chat: OpenAI, model: str, remembered: str, question: str) -> str:
    system = "You are a helpful assistant. What you remember about the user:\n" + remembered
    reply = chat.chat.completions.create(
        model=model,
        messages=[{"role": "system", "content": system}, {"role": "user", "content": question}],
    )
    return reply.choices[0].message.content or ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--llm-url", default="http://localhost:11434/v1")
    parser.add_argument("--model", default="qwen2.5:3b")
    parser.add_argument(
        "--db", default=None, help="omoide database file (default ~/.omoide/omoide.db)"
    )
    parser.add_argument("--user", default="mei")
    args = parser.parse_args()

    chat = OpenAI(base_url=args.llm_url, api_key="not-needed-locally")
    with Memory(args.db) as memory:
        for question in TURNS:
            context = memory.context(
                question, user_id=args.user, session_id="chat-1", token_budget=800
            )
            text = answer(chat, args.model, context.text, question)
            memory.add(
                [{"role": "user", "content": question}, {"role": "assistant", "content": text}],
                user_id=args.user,
                session_id="chat-1",
            )
            print(f"user: {question}\nassistant: {text}")
        found = memory.search("which tea does Mei love?", user_id=args.user, limit=1)
        print(f"recalled: {found.hits[0].memory.text}")


if __name__ == "__main__":
    main()
