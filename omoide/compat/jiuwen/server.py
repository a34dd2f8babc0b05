"""``memory-server``: omoide started the way JiuwenMemory's ``memory_server`` is.

    $ memory-server                                   # 127.0.0.1:8000
    $ IP=127.0.0.1 PORT=8000 python -m omoide.compat.jiuwen.server
    $ IP=0.0.0.0 MEMORY_API_KEY=dev-secret memory-server

It is ``omoide serve`` with the JiuwenMemory endpoints always on: settings come from the same
environment variables and ``.env`` files (``IP``, ``PORT``, ``MEMORY_API_KEY``, ``MODEL_*``,
``EMBED_*`` ... or their ``OMOIDE_*`` names). A non-loopback ``IP`` without ``MEMORY_API_KEY``
stops the process before it listens with upstream's message and exit code 1 (upstream's
``sys.exit(1)``); other invalid settings exit with omoide's code 2.
"""

from __future__ import annotations

import sys

from omoide import extras
from omoide.config import Settings, load_settings
from omoide.errors import InvalidInput

WELCOME = "Welcome to Memory Engine API"  # upstream's GET / message
EXPOSED = (
    "IP={host} exposes the service to the network, but MEMORY_API_KEY is not set. "
    "Set MEMORY_API_KEY in ~/.omoide/.env (or the environment), or use IP=127.0.0.1 for "
    "local-only access."
)


def _refuse_exposure(settings: Settings) -> None:
    try:
        settings.server.check_exposure()
    except InvalidInput:
        sys.stderr.write(f"memory-server: {EXPOSED.format(host=settings.server.host)}\n")
        sys.exit(1)


def main() -> None:
    """Run the server until interrupted; exit code 1 when exposed without a key or without the
    server extra, 2 for other invalid or unsafe settings."""
    extras.exit_without("memory-server", "server")
    from omoide.serve.server import serve  # the server extra's packages

    try:
        settings = load_settings()
    except InvalidInput as exc:
        sys.stderr.write(f"memory-server: {exc.message}\n")
        sys.exit(2)
    _refuse_exposure(settings)
    serve(settings.updated(compat_jiuwen=True), welcome=WELCOME)


if __name__ == "__main__":
    main()
