"""``nexus-memory-service``: omoide started the way nexusAI's memory service is (seed 000).

    $ SQLITE_PATH=./nexusai.db nexus-memory-service        # 127.0.0.1:3002
    $ PORT=4000 SQLITE_PATH=/data/memory.db python -m omoide.compat.nexus.server

It is ``omoide serve`` with the nexusAI routes always on, and nexusAI's environment variables
mapped where they mean the same thing:

- ``PORT``: the port, default 3002 (nexusAI's) instead of omoide's 8000;
- ``SQLITE_PATH``: the SQLite file (omoide's own schema, not nexusAI's: a nexusAI database
  file is not read); it wins over ``DB_URL`` / ``OMOIDE_DB_URL``. Unset, omoide's default
  ``~/.omoide/omoide.db`` is used (nexusAI requires it);
- ``QDRANT_URL``, ``EMBEDDING_SERVICE_URL``, ``INFERENCE_SERVICE_URL``: not used, and said so
  on stderr at start: omoide keeps vectors in its SQLite file, embeds with its own embedder
  (``OMOIDE_EMBEDDER`` ...) and extracts entities with ``OMOIDE_LLM_BASE_URL`` /
  ``OMOIDE_LLM_MODEL``.

Every other setting is omoide's (``IP``, ``OMOIDE_*``, ``.env`` files).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

from omoide import extras
from omoide.config import Settings, load_settings, process_environment
from omoide.errors import InvalidInput

NEXUS_PORT = 3002
UNUSED = {
    "QDRANT_URL": "vectors live in omoide's SQLite file",
    "EMBEDDING_SERVICE_URL": "omoide embeds with its own embedder (OMOIDE_EMBEDDER, ...)",
    "INFERENCE_SERVICE_URL": (
        "entity extraction uses OMOIDE_LLM_BASE_URL and OMOIDE_LLM_MODEL (OpenAI-compatible)"
    ),
}


def nexus_settings(env: Mapping[str, str] | None = None) -> tuple[Settings, list[str]]:
    """The settings nexusAI's variables ask for, and one note per variable set but not used."""
    env = process_environment("SQLITE_PATH", *UNUSED) if env is None else env
    settings = load_settings()
    update: dict[str, object] = {"compat_nexus": True}
    if "port" not in settings.server.model_fields_set:
        update["port"] = NEXUS_PORT
    sqlite_path = env.get("SQLITE_PATH", "").strip()
    if sqlite_path:
        update["db_url"] = f"sqlite:///{Path(sqlite_path).expanduser().resolve()}"
    notes = [
        f"{name} is set but not used: {why}"
        for name, why in UNUSED.items()
        if env.get(name, "").strip()
    ]
    return settings.updated(**update), notes


def main() -> None:
    """Run the server until interrupted; exit code 1 without the server extra, 2 for invalid or
    unsafe settings."""
    extras.exit_without("nexus-memory-service", "server")
    from omoide.serve.server import serve  # the server extra's packages

    try:
        settings, notes = nexus_settings()
    except InvalidInput as exc:
        sys.stderr.write(f"nexus-memory-service: {exc.message}\n")
        sys.exit(2)
    for note in notes:
        sys.stderr.write(f"nexus-memory-service: {note}\n")
    serve(settings)


if __name__ == "__main__":
    main()
