"""omoide's function tools inside an OpenAI Agents SDK ``Agent``, run by the SDK's ``Runner``
with its own ``ScriptedModel``, over ``Memory``, ``Client`` and ``AsyncClient``."""

from __future__ import annotations

import asyncio
from typing import Any

from agents import Agent, Runner, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call

from omoide import AsyncClient
from omoide.integrations.openai_agents import memory_tools
from omoide.interface import MemoryAPI
from tests.api.conftest import Running
from tests.integrations.examples import example


def _tool_outputs(model: ScriptedModel) -> list[str]:
    """What the tools returned, as the model saw it on its following calls."""
    seen: list[str] = []
    for recorded in model.calls:
        items = recorded.input if isinstance(recorded.input, list) else []
        seen += [str(i["output"]) for i in items if i.get("type") == "function_call_output"]
    return list(dict.fromkeys(seen))


def _script() -> ScriptedModel:
    return ScriptedModel(
        [
            [function_call("remember", {"text": "Mei loves jasmine tea"}, call_id="c1")],
            [assistant_message("Noted!")],
            [function_call("recall", {"query": "which tea does Mei like"}, call_id="c2")],
            [assistant_message("Buy jasmine tea.")],
        ]
    )


def test_example_remembers_across_runs(backend: MemoryAPI) -> None:
    model = _script()
    answers = asyncio.run(example("openai_agents_tools").run(model, backend))
    assert answers == ["Noted!", "Buy jasmine tea."]
    outputs = _tool_outputs(model)
    assert outputs[0].startswith("remembered [") and "jasmine" in outputs[1]
    second_run = model.calls[2].input  # starts from the question alone: no first-run history
    assert [i["content"] for i in second_run] == [example("openai_agents_tools").TURNS[1]]  # type: ignore[index]
    assert backend.get_all(user_id="mei").items[0].text == "Mei loves jasmine tea"
    model.assert_complete()


def test_context_and_forget_over_async_client(live: Running) -> None:
    live.engine.add("Mei lives in Lisbon", user_id="mei")
    live.engine.add("Bo lives in Porto", user_id="bo")
    memory_id = live.engine.get_all(user_id="mei").items[0].id

    async def run() -> tuple[list[str], ScriptedModel]:
        set_tracing_disabled(True)
        model = ScriptedModel(
            [
                [function_call("memory_context", {"query": "where does Mei live"}, call_id="c1")],
                [function_call("recall", {"query": "Porto"}, call_id="c2")],
                [function_call("forget", {"memory_id": memory_id}, call_id="c3")],
                [function_call("forget", {"memory_id": memory_id}, call_id="c4")],
                [assistant_message("Done.")],
            ]
        )
        async with AsyncClient(live.url) as memory:
            agent = Agent(name="a", model=model, tools=memory_tools(memory, user_id="mei"))
            await Runner.run(agent, "Where do I live? Then forget it.")
        return _tool_outputs(model), model

    outputs, _ = asyncio.run(run())
    assert "Mei lives in Lisbon" in outputs[0] and "Bo" not in outputs[0]
    assert "Porto" not in outputs[1]  # bound to mei: bo's memory is not hers to recall
    assert outputs[2:] == [f"forgot {memory_id}", f"no memory {memory_id} to forget"]
    assert live.engine.get_all(user_id="mei").total == 0
    assert live.engine.get_all(user_id="bo").total == 1


def test_tools_are_the_sdks_function_tools(backend: MemoryAPI) -> None:
    tools: list[Any] = memory_tools(backend, user_id="mei")
    assert [t.name for t in tools] == ["remember", "recall", "forget", "memory_context"]
    assert all("user_id" not in t.params_json_schema["properties"] for t in tools)
