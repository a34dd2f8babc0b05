# ruff: noqa: T201  (an example shows what it does by printing it)
"""A LlamaIndex chat engine whose long-term memory is omoide (``pip install
'omoide[llamaindex]' llama-index-llms-openai-like``): turns that leave the short-term buffer
are stored in omoide, and a later conversation, with an empty buffer, gets them back.

    python examples/llamaindex_memory.py --llm-url http://localhost:11434/v1 --model qwen2.5:3b
    omoide serve & python examples/llamaindex_memory.py --omoide-url http://127.0.0.1:8000
"""

from __future__ import annotations

import argparse

from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.llms import LLM
from llama_index.core.memory import Memory as ChatMemory

from omoide import Client, Memory
from omoide.integrations.llamaindex import OmoideMemoryBlock
from omoide.interface import MemoryAPI

CONVERSATIONS = {
    "chat-1": ["Hi, I'm Mei.", "I love jasmine tea.", "And I live in Lisbon."],
    "chat-2": ["What tea should I buy?"],
}


def chat_memory(memory: MemoryAPI, session: str, user: str) -> ChatMemory:
    block = OmoideMemoryBlock(memory=memory, user_id=user, session_id=session)
    # Small limits, so that this short demo's turns leave the buffer for omoide quickly.
    return ChatMemory.from_defaults(
        session_id=session,
        token_limit=30,
        chat_history_token_ratio=0.3,
        token_flush_size=10,
        memory_blocks=[block],
    )


def run(llm: LLM, memory: MemoryAPI, user: str = "mei") -> list[str]:
    """Each conversation has its own short-term memory; omoide is what they share."""
    answers = []
    for session, questions in CONVERSATIONS.items():
        engine = SimpleChatEngine.from_defaults(llm=llm, memory=chat_memory(memory, session, user))
        for question in questions:
            answers.append(str(engine.chat(question)))
            print(f"[{session}] user: {question}\n[{session}] assistant: {answers[-1]}")
    return answers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--llm-url", default="http://localhost:11434/v1")
    parser.add_argument("--model", default="qwen2.5:3b")
    parser.add_argument("--omoide-url", default=None, help="a server; default: embedded")
    args = parser.parse_args()
    from llama_index.llms.openai_like import OpenAILike  # any LlamaIndex LLM

    llm = OpenAILike(api_base=args.llm_url, model=args.model, api_key="none", is_chat_model=True)
    with Client(args.omoide_url) if args.omoide_url else Memory() as memory:
        run(llm, memory)


if __name__ == "__main__":
    main()
