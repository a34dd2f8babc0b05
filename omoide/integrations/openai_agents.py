"""OpenAI Agents SDK tools that remember with omoide (``pip install 'omoide[agents]'``).

    from agents import Agent, Runner
    from omoide import AsyncClient
    from omoide.integrations.openai_agents import memory_tools

    memory = AsyncClient("http://127.0.0.1:8000")          # or Memory(), or Client(...)
    agent = Agent(name="assistant", tools=memory_tools(memory, user_id="mei"))
    await Runner.run(agent, "Remember that I love jasmine tea")

The tools are the SDK's own ``function_tool``s, bound to one tenant (the model never chooses
whose memories it reads): ``remember(text)``, ``recall(query)``, ``forget(memory_id)`` and
``memory_context(query)`` (omoide's context block within ``token_budget`` tokens). With an
``AsyncClient`` they are awaited on the agent's loop; a ``Memory`` or ``Client`` runs in a
worker thread.

Not supported yet: streaming tool output; sessions (the SDK's ``Session`` for conversation
history is a separate interface: these tools are long-term memory, not a transcript store).
"""

from __future__ import annotations

from agents import FunctionTool, function_tool

from omoide.errors import NotFound
from omoide.integrations._calls import AnyMemory, call
from omoide.types import DEFAULT_ID, ContextResult, MemoryItem, SearchResult


def memory_tools(
    memory: AnyMemory,
    *,
    user_id: str,
    scope_id: str = DEFAULT_ID,
    session_id: str | None = None,
    limit: int = 5,
    token_budget: int = 1500,
) -> list[FunctionTool]:
    """``remember``, ``recall``, ``forget`` and ``memory_context`` for the tenant ``user_id``
    (and ``scope_id``); ``remember`` files memories under ``session_id`` when one is given."""
    tenant = {"user_id": user_id, "scope_id": scope_id}

    @function_tool
    async def remember(text: str) -> str:
        """Store a fact or preference about the user for later conversations.

        Args:
            text: The fact, in one self-contained sentence.
        """
        stored: list[MemoryItem] = await call(
            memory, "add", text, session_id=session_id, infer=False, **tenant
        )
        return f"remembered [{stored[0].id}] {stored[0].text}"

    @function_tool
    async def recall(query: str) -> str:
        """Search what is remembered about the user; each line starts with the memory's id.

        Args:
            query: What to look for, in words.
        """
        found: SearchResult = await call(memory, "search", query, limit=limit, **tenant)
        lines = [f"- [{hit.memory.id}] {hit.memory.text}" for hit in found.hits]
        return "\n".join(lines) or "nothing remembered about that"

    @function_tool
    async def forget(memory_id: str) -> str:
        """Delete one remembered memory, by the id ``recall`` showed.

        Args:
            memory_id: The id between the brackets.
        """
        try:
            await call(memory, "delete", memory_id, **tenant)
        except NotFound:
            return f"no memory {memory_id} to forget"
        return f"forgot {memory_id}"

    @function_tool
    async def memory_context(query: str) -> str:
        """Everything relevant that is known for a question: profile, facts, recent turns.

        Args:
            query: The question or topic.
        """
        found: ContextResult = await call(
            memory, "context", query, session_id=session_id, token_budget=token_budget, **tenant
        )
        return found.text or "nothing known yet"

    return [remember, recall, forget, memory_context]


__all__ = ["memory_tools"]
