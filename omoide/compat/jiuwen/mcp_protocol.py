"""The SDK's ``MCPServer``, answering a client's mistakes as the MCP specification says.

- An unknown tool or prompt name is a protocol error, JSON-RPC's ``-32602`` (Invalid params),
  as the specification's tools and prompts pages show. The SDK answered an unknown tool with a
  tool result (``isError``), and an unknown prompt with error code ``0`` (no JSON-RPC code) and a
  traceback at ERROR in the server's log.
- Arguments that fail the tool's schema stay a tool error (``isError``, so a model can correct
  them), worded as omoide's other refusals: ``num: Input should be less than or equal to 1000``.
  The SDK passed on pydantic's text, with the SDK's internal model name
  (``search_memoriesArguments``) and a link to pydantic's docs.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, CallToolResult, GetPromptResult, InputRequiredResult
from pydantic import ValidationError

__all__ = ["Server", "argument_errors"]


class Server(MCPServer[Any]):
    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        if name not in {tool.name for tool in await self.list_tools()}:
            raise MCPError(INVALID_PARAMS, f"Unknown tool: {name}")
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError:
            raise
        except ToolError as exc:
            cause = exc.__cause__
            if not isinstance(cause, ValidationError):
                raise
            # ``from cause``: the SDK logs a ValidationError's field names, never the values.
            raise ToolError(f"Error executing tool {name}: {argument_errors(cause)}") from cause

    async def get_prompt(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        context: Context[Any, Any] | None = None,
    ) -> GetPromptResult | InputRequiredResult:
        if name not in {prompt.name for prompt in await self.list_prompts()}:
            raise MCPError(INVALID_PARAMS, f"Unknown prompt: {name}")
        return await super().get_prompt(name, arguments, context)


def argument_errors(exc: ValidationError) -> str:
    """Each failed argument by its name (``messages.0`` for an item) with what it should be.

    >>> from pydantic import BaseModel
    >>> class Args(BaseModel):
    ...     query: str
    ...     num: int = 5
    >>> try:
    ...     Args.model_validate({"num": "many"})
    ... except ValidationError as exc:
    ...     print(argument_errors(exc))
    query: Field required; num: Input should be a valid integer, unable to parse string as an integer
    """  # noqa: E501 (a doctest's expected output is one line)
    return "; ".join(
        f"{'.'.join(str(part) for part in error['loc'])}: {error['msg']}" for error in exc.errors()
    )
