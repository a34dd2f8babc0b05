"""A LlamaIndex memory block kept in omoide (``pip install 'omoide[llamaindex]'``).

``llama_index.core.memory.Memory`` keeps a short-term chat buffer; the turns it flushes out of
the buffer go to its memory blocks, and before each LLM call each block adds what it holds
for the conversation. ``OmoideMemoryBlock`` stores the flushed turns in omoide (an episode of
``session_id``, so a server with an LLM extracts facts, profile and summaries from them) and
returns the memories omoide finds for the latest messages, from every session of the tenant::

    from llama_index.core.memory import Memory as ChatMemory
    from omoide import Memory
    from omoide.integrations.llamaindex import OmoideMemoryBlock

    block = OmoideMemoryBlock(memory=Memory(), user_id="mei", session_id="chat-1")
    chat_memory = ChatMemory.from_defaults(session_id="chat-1", memory_blocks=[block])

``memory`` is a ``Memory``, a ``Client`` or an ``AsyncClient`` (awaited; the others run in a
worker thread). With ``use_context=True`` the block is omoide's whole context block for the
query (profile, summary, memories, within ``token_budget``) instead of the search hits.

Not supported yet: ``atruncate`` drops the whole block when the memory is over its limit
(LlamaIndex's default); images and other non-text content blocks are stored as their text.
"""

from __future__ import annotations

from typing import Any

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.bridge.pydantic import Field
from llama_index.core.memory.memory import BaseMemoryBlock

from omoide.integrations._calls import call
from omoide.types import DEFAULT_ID, ContextResult, SearchResult

_ROLES = {"user", "assistant", "system", "tool"}


class OmoideMemoryBlock(BaseMemoryBlock[str]):
    """Long-term memory of one omoide tenant, as a LlamaIndex memory block."""

    name: str = Field(default="omoide", description="The block's name in the prompt.")
    memory: Any = Field(description="A Memory, Client or AsyncClient.")
    user_id: str = Field(description="Whose memories these are.")
    scope_id: str = Field(default=DEFAULT_ID)
    session_id: str | None = Field(default=None, description="Where flushed turns are filed.")
    limit: int = Field(default=5, description="How many memories to return.")
    retrieval_context_window: int = Field(
        default=3, description="How many of the latest messages make the search query."
    )
    use_context: bool = Field(default=False, description="Return omoide's context block.")
    token_budget: int = Field(default=1000, description="The context block's budget.")

    def _tenant(self) -> dict[str, str]:
        return {"user_id": self.user_id, "scope_id": self.scope_id}

    async def _aget(self, messages: list[ChatMessage] | None = None, **_: Any) -> str:
        recent = (messages or [])[-self.retrieval_context_window :]
        query = "\n".join(m.content for m in recent if m.content).strip()
        if not query:
            return ""
        if self.use_context:
            found: ContextResult = await call(
                self.memory,
                "context",
                query,
                session_id=self.session_id,
                token_budget=self.token_budget,
                **self._tenant(),
            )
            return found.text
        hits: SearchResult = await call(
            self.memory, "search", query, limit=self.limit, **self._tenant()
        )
        return "\n".join(f"- {hit.memory.text}" for hit in hits.hits)

    async def _aput(self, messages: list[ChatMessage]) -> None:
        turns = [
            {"role": _role(m), "content": m.content}
            for m in messages
            if m.content and m.content.strip()
        ]
        if turns:
            await call(self.memory, "add", turns, session_id=self.session_id, **self._tenant())


def _role(message: ChatMessage) -> str:
    role = str(getattr(message.role, "value", message.role))
    return role if role in _ROLES else "assistant"


__all__ = ["OmoideMemoryBlock"]
