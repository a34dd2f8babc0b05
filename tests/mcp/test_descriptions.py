"""What an MCP client shows a person and a model: each tool's description as written, without
the indentation of the docstring it came from, and schemas that accept what the tool accepts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jsonschema

from tests.api.conftest import Running
from tests.mcp.conftest import http_client, run


def test_tool_descriptions_are_dedented(serve: Callable[..., Running]) -> None:
    server = serve()

    async def script() -> dict[str, str]:
        async with http_client(server.url) as client:
            return {t.name: t.description or "" for t in (await client.list_tools()).tools}

    described = run(script)
    assert described
    for name, text in described.items():
        assert text and text == text.strip(), name
        lines = text.splitlines()
        assert all(not line.startswith(" ") for line in lines), (name, text)
    assert "\n" in described["add_messages"]  # a description of two lines keeps them


def test_schemas_say_what_the_tools_accept(serve: Callable[..., Running]) -> None:
    """A model writes arguments from the schema: add_messages' and update_variables' said any
    object would do (``[{}]``, ``{"city": null}``), arguments the tools refuse."""
    server = serve()

    async def script() -> tuple[dict[str, Any], list[tuple[str, dict[str, Any], bool]]]:
        async with http_client(server.url) as client:
            schemas = {t.name: t.input_schema for t in (await client.list_tools()).tools}
            calls = []
            for name, args in CASES:
                result = await client.call_tool(name, args)
                calls.append((name, args, not result.is_error))
            return schemas, calls

    schemas, calls = run(script)
    for name, args, accepted in calls:
        valid = jsonschema.Draft202012Validator(schemas[name]).is_valid(args)
        assert valid == accepted, (name, args, accepted)


CASES: list[tuple[str, dict[str, Any]]] = [
    ("add_messages", {"messages": [{"role": "user", "content": "I like tea"}], "infer": False}),
    ("add_messages", {"messages": [{"content": "no role: a user's"}], "infer": False}),
    ("add_messages", {"messages": [], "infer": False}),
    ("add_messages", {"messages": [{"role": "user"}], "infer": False}),
    ("add_messages", {"messages": [{"role": "user", "content": 5}], "infer": False}),
    ("update_variables", {"variables": {"city": "Lisbon", "age": 5, "vip": True}}),
    ("update_variables", {"variables": {"city": None}}),
    ("update_variables", {"variables": {"city": {"name": "Lisbon"}}}),
    ("update_variables", {"variables": {"": "x"}}),
    ("search_memories", {"query": "tea"}),
    ("search_memories", {"query": ""}),
    ("search_memories", {"query": "  "}),
    ("search_history_summaries", {"query": " "}),
    ("get_context", {"query": ""}),
    ("graph_neighborhood", {"entity": " "}),
    ("update_memory", {"mem_id": "var:city", "memory": " "}),  # a variable may be blank
]


def test_annotations_say_which_tools_change_memory(serve: Callable[..., Running]) -> None:
    """Without annotations a client must take every tool as destructive (the specification's
    default), searches and health_check included, and could not tell delete_all_memories from
    them either."""
    server = serve()

    async def script() -> dict[str, Any]:
        async with http_client(server.url) as client:
            return {t.name: t.annotations for t in (await client.list_tools()).tools}

    annotated = run(script)
    assert all(a is not None and a.open_world_hint is False for a in annotated.values())
    reads = {n for n, a in annotated.items() if a.read_only_hint}
    assert reads == {"get_memories", "get_variables", "health_check", "graph_neighborhood"} | {
        "list_sessions"
    }
    destructive = {n for n, a in annotated.items() if not a.read_only_hint and a.destructive_hint}
    assert destructive == {"update_memory", "delete_memory", "delete_all_memories"} | {
        "update_variables",
        "delete_variables",
    }
    assert annotated["search_memories"].destructive_hint is False  # it records uses, no more
