"""The MCP tool set both transports serve (``omoide serve`` at ``/mcp``, ``omoide mcp`` over
stdio): JiuwenMemory's MCP tools plus omoide's own. A light module, without the HTTP server's
packages, so ``omoide mcp`` needs only the ``mcp`` extra."""

from omoide.compat.jiuwen.mcp import build_server as mcp_tools

__all__ = ["mcp_tools"]
