"""``omoide mcp``: the MCP server over stdin/stdout, for one local agent.

The process owns one engine; there is no key, so calls may name any tenant and default to
``MCP_DEFAULT_USER_ID`` / ``MCP_DEFAULT_SCOPE_ID``. While it serves, the SDK points fd 1 at
stderr, so a stray print (a model loading, say) cannot corrupt the protocol stream.
"""

from __future__ import annotations

import logging
import sys

from omoide.api.deps import Tenancy
from omoide.compat.jiuwen.common import search_recipe
from omoide.config import Settings
from omoide.mcp.server import build_server
from omoide.mcp.tools import Caller
from omoide.memory import Memory
from omoide.redact import redact_logs


def run_stdio(engine: Memory, settings: Settings) -> None:
    """Serve until stdin closes. Logs go to stderr: warnings and worse, or everything with
    ``OMOIDE_LOG_LEVEL=debug`` (an agent host shows a server's stderr as its log)."""
    debug = settings.log_level.lower() in ("debug", "trace")
    logging.basicConfig(
        level=logging.DEBUG if debug else logging.WARNING,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    redact_logs()
    caller = Caller(
        engine,
        Tenancy(None),
        settings.mcp_default_user_id,
        settings.mcp_default_scope_id,
        search_recipe(settings),
    )
    build_server(lambda _ctx: caller, "DEBUG" if debug else "WARNING").run("stdio")
