"""``memory-server``: omoide started the way JiuwenMemory's ``memory_server`` is.

    $ memory-server                                   # 127.0.0.1:8000
    $ IP=127.0.0.1 PORT=8000 python -m omoide.server
    $ IP=0.0.0.0 MEMORY_API_KEY=dev-secret memory-server

It is ``omoide serve`` with the JiuwenMemory endpoints always on: settings come from the same
environment variables and ``.env`` files (``IP``, ``PORT``, ``MEMORY_API_KEY``, ``MODEL_*``,
``EMBED_*`` ... or their ``OMOIDE_*`` names). A non-loopback ``IP`` without ``MEMORY_API_KEY``
stops the process with exit code 2 before it listens.
"""

from __future__ import annotations

import sys

from omoide.api.server import serve
from omoide.config import load_settings
from omoide.errors import InvalidInput


def main() -> None:
    """Run the server until interrupted; exit code 2 for invalid or unsafe settings."""
    try:
        settings = load_settings()
    except InvalidInput as exc:
        sys.stderr.write(f"memory-server: {exc.message}\n")
        sys.exit(2)
    serve(settings.model_copy(update={"compat_jiuwen": True}))


if __name__ == "__main__":
    main()
