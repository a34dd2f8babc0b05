"""``serve(settings)``: what ``omoide serve`` runs.

Unsafe or invalid settings stop the process before it binds, with one line on stderr and exit
code 2: a non-loopback address without an API key, a bad ``DB_URL``, an unknown log level, a
store that cannot be opened. Shutdown (SIGINT/SIGTERM) is graceful: requests in flight finish,
then the job workers finish their batch; queued jobs are rows in SQLite and run on next start.
Serving without an API key is allowed on loopback, with a warning: every local process and
user can then read and delete every tenant. Timeouts, the connection cap and the access log
are set in ``omoide.serve.transport``.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

import uvicorn

from omoide.config import Settings
from omoide.errors import InvalidInput, OmoideError
from omoide.redact import redact_logs
from omoide.serve.app import WELCOME, create_app
from omoide.serve.process import limit_blas_threads
from omoide.serve.transport import uvicorn_config
from omoide.store.files import prepare_database, private_umask

LOG_LEVELS = ("critical", "error", "warning", "info", "debug", "trace")
log = logging.getLogger("omoide.api")
DEFAULT_DATA_DIR = Path("~/.omoide")


def startup_warnings(settings: Settings) -> list[str]:
    """What an operator should know before the first request; never a secret."""
    warnings = []
    server = settings.server
    if not (server.api_key or server.tenant_keys):
        warnings.append(
            f"serving on {server.host}:{server.port} without an API key: every local process"
            " and user (and any web page, through a name on OMOIDE_ALLOWED_HOSTS) can read and"
            " delete every tenant; set OMOIDE_API_KEY to a secret"
        )
    keyless = not (server.api_key or server.tenant_keys)
    if server.allowed_hosts is None and server.host_allowlist() is None and keyless:
        warnings.append(
            f"answering requests for any Host name on {server.host}: set OMOIDE_ALLOWED_HOSTS"
            " to the names clients use"
        )
    if (
        settings.store.encryption_passphrase is not None
        and settings.store.file_mirror_root is not None
    ):
        warnings.append(
            "encryption at rest is on, but INDEX_BACKEND=file also writes every memory as"
            f" plaintext markdown under {settings.store.file_mirror_root}"
        )
    return warnings


def preflight(settings: Settings) -> None:
    """Raise ``OmoideError`` (or ``OSError``) for settings the server must not start with."""
    settings.server.check_exposure()
    if settings.server.log_level.lower() not in LOG_LEVELS:
        raise InvalidInput(
            f"invalid setting OMOIDE_LOG_LEVEL: {settings.server.log_level!r} is not one of "
            + ", ".join(LOG_LEVELS)
        )
    from omoide.memory import Memory

    # The database file is made 0600 (and a new data directory 0700) before SQLite creates it
    # with the umask's 0644: it holds every tenant's conversations.
    location = settings.store.location
    if isinstance(location, Path):  # a PostgreSQL server keeps its own files
        own_dir = settings.store.data_dir == DEFAULT_DATA_DIR and not settings.store.db_url
        prepare_database(location, default_dir=location.parent if own_dir else None)
    Memory(settings=settings, workers=0).close()  # opens (and migrates) the store, then lets go


def addresses(settings: Settings) -> list[str]:
    """Where a person finds the server, for the startup log: the API, its docs, the web UI,
    MCP, and the command line."""
    host = settings.server.host
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    port = settings.server.port or "<port>"  # 0: the system picks it; uvicorn's line names it
    base = f"http://{f'[{shown}]' if ':' in shown else shown}:{port}"
    where = (
        f"omoide serves {base}: the API (GET / lists the routes), {base}/docs (try it out),"
        f" {base}/ui/ (the web UI), {base}/mcp (MCP over HTTP)"
    )
    if shown != host:
        where += f"; listening on every address ({host})"
    cli = (
        "the command line: omoide --help (in a checkout: .venv/bin/omoide --help, or source"
        " .venv/bin/activate first)"
    )
    return [where, cli]


def serve(settings: Settings, *, welcome: str = WELCOME) -> None:
    """Run the HTTP server until interrupted. Exits with code 2 on unsafe settings.
    ``welcome``: the message of ``GET /``."""
    # torch's OpenMP threads busy-wait after each parallel region; in a server that spinning
    # starves the event loop (measured on 2 cores: requests stalled ~500 ms behind each embed,
    # 14 ms once passive). Must be set before torch loads, which happens on the first embed.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    limit_blas_threads(settings.server.blas_threads)
    private_umask()  # the database, its WAL and backups: readable by this user only
    try:
        preflight(settings)
    except OmoideError as exc:
        sys.stderr.write(f"omoide: {exc.message}\n")
        sys.exit(2)
    except OSError as exc:
        sys.stderr.write(f"omoide: cannot open the store: {exc}\n")
        sys.exit(2)
    level = settings.server.log_level.lower()
    logging.basicConfig(
        level=logging.getLevelName(level.upper()) if level != "trace" else logging.DEBUG,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    redact_logs()
    for warning in startup_warnings(settings):
        log.warning(warning)
    for line in addresses(settings):
        log.info(line)
    app = create_app(settings, welcome=welcome)
    uvicorn.Server(uvicorn_config(app, settings)).run()
