"""``OmoideMemoryBlock`` in LlamaIndex's ``Memory``, driven by a chat engine over a scripted
LLM: turns flushed from one conversation come back into another's prompt."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator
from typing import Any

import pytest
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.bridge.pydantic import Field
from llama_index.core.llms import (
    CompletionResponse,
    CompletionResponseGen,
    CustomLLM,
    LLMMetadata,
)
from llama_index.core.llms.callbacks import llm_completion_callback
from llama_index.core.memory import Memory as ChatMemory

from omoide import AsyncClient
from omoide.integrations.llamaindex import OmoideMemoryBlock
from omoide.interface import MemoryAPI
from tests.api.conftest import Running
from tests.integrations.examples import example

# LlamaIndex's default chat store (SQLAlchemy over aiosqlite in memory) never closes its
# connections; that is its garbage, not a leak of omoide's: collected here, under this filter,
# rather than in whichever test the garbage collector next runs.
pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


@pytest.fixture(autouse=True)
def _collect_llamaindex_garbage() -> Iterator[None]:
    # What exists before the test is frozen (left out of collections until the end), so the
    # collection walks only what the test made: all of LlamaIndex's garbage, and not the rest
    # of the run's heap (the model, every module), which made each collection slow.
    gc.freeze()
    try:
        yield
        gc.collect()
    finally:
        gc.unfreeze()


class ScriptedLLM(CustomLLM):
    """Answers from a script and records every prompt it was given."""

    replies: list[str]
    prompts: list[str] = Field(default_factory=list)

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="scripted")

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:  # noqa: ARG002
        self.prompts.append(prompt)
        return CompletionResponse(text=self.replies.pop(0))

    @llm_completion_callback()
    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        raise NotImplementedError


def test_example_recalls_in_a_new_conversation(backend: MemoryAPI) -> None:
    llm = ScriptedLLM(replies=["Hello Mei!", "Lovely.", "Nice city.", "Try a jasmine pearl."])
    answers = example("llamaindex_memory").run(llm, backend)
    assert answers[-1] == "Try a jasmine pearl."
    stored = backend.get_all(user_id="mei").items
    assert "I love jasmine tea." in {m.text for m in stored}  # flushed out of chat-1's buffer
    assert {m.session_id for m in stored} == {"chat-1"}
    last = llm.prompts[-1]
    assert "What tea should I buy?" in last and "I love jasmine tea." in last
    assert "Hi, I'm Mei." not in last.split("<memory>")[0]  # chat-2's buffer starts empty


def test_block_over_async_client_reads_and_writes(live: Running) -> None:
    live.engine.add("Bo drinks coffee", user_id="bo")

    async def run() -> tuple[str, str]:
        async with AsyncClient(live.url) as memory:
            block = OmoideMemoryBlock(memory=memory, user_id="mei", session_id="s1")
            await block.aput([ChatMessage(role="user", content="I love jasmine tea")])
            found = await block.aget([ChatMessage(role="user", content="which tea?")])
            context = OmoideMemoryBlock(memory=memory, user_id="mei", use_context=True)
            return found, await context.aget([ChatMessage(content="what do I drink?")])

    found, context = asyncio.run(run())
    assert found == "- I love jasmine tea"  # only mei's memories
    assert "I love jasmine tea" in context and "coffee" not in context
    assert live.engine.list_episodes("s1", user_id="mei")[1] == 1


def test_block_in_memory_get(backend: MemoryAPI) -> None:
    backend.add("Mei lives in Lisbon", user_id="mei")
    block = OmoideMemoryBlock(memory=backend, user_id="mei")
    chat = ChatMemory.from_defaults(session_id="x", memory_blocks=[block])
    chat.put(ChatMessage(role="user", content="where does Mei live?"))
    system = chat.get()[0]
    assert system.role == "system" and "Mei lives in Lisbon" in str(system.content)
