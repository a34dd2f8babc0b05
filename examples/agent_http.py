# ruff: noqa: T201  (an example shows what it does by printing it)
"""The same agent against a running ``omoide serve``, through ``omoide.Client``.

    omoide serve &                      # http://127.0.0.1:8000
    python examples/agent_http.py --omoide-url http://127.0.0.1:8000 \
        --llm-url http://localhost:11434/v1 --model qwen2.5:3b

``omoide.Client`` has the library's methods and return types; with a key configured on the
server, set MEMORY_API_KEY here too.
"""

from __future__ import annotations

import argparse
import os

from openai import OpenAI

from omoide import Client

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
    parser.add_argument("--omoide-url", default="http://127.0.0.1:8000")
    parser.add_argument("--llm-url", default="http://localhost:11434/v1")
    parser.add_argument("--model", default="qwen2.5:3b")
    parser.add_argument("--user", default="mei")
    args = parser.parse_args()

    chat = OpenAI(base_url=args.llm_url, api_key="not-needed-locally")
    memory = Client(args.omoide_url, api_key=os.environ.get("MEMORY_API_KEY"))
    try:
        for question in TURNS:
            hits = memory.search(question, user_id=args.user, limit=5).hits
            remembered = "\n".join(f"- {hit.memory.text}" for hit in hits)
            text = answer(chat, args.model, remembered, question)
            memory.add(
                [{"role": "user", "content": question}, {"role": "assistant", "content": text}],
                user_id=args.user,
                session_id="chat-1",
            )
            print(f"user: {question}\nassistant: {text}")
        found = memory.search("which tea does Mei love?", user_id=args.user, limit=1)
        print(f"recalled: {found.hits[0].memory.text}")
    finally:
        memory.close()


if __name__ == "__main__":
    main()
