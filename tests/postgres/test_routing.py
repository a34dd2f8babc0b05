"""Every statement a request runs can be routed to one tenant's shard (issue 35, point 7).

A distributed PostgreSQL (Citus, ``docs/postgres-citus.md``) sends a statement to one shard
when every distributed table in it is filtered by an equality on the distribution column,
``user_id``, or joined on it to one that is. Here a real server runs the whole HTTP surface
(the native /v1 API and the three compatibility interfaces: a scripted session with real data,
then every operation of the OpenAPI document once, with the job worker running) over a schema
whose connections log every statement (``log_statement = all``). Each logged statement is then
parsed by PostgreSQL's own parser (``tests/postgres/routing.py``), and every reference to a
tenant table (any table with a ``user_id`` column) must be routed. The exceptions are listed
below, each with the reason it is acceptable on Citus.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from omoide import Memory
from omoide.embed.hashing import HashEmbedder
from omoide.store.postgres.db import connect
from tests.api.conftest import Running, running
from tests.api.openapi_walk import Schemas, dumps, operations
from tests.postgres.routing import logged_statements, unrouted
from tests.postgres.server import server_url

# Statements that may touch several tenants' rows, matched by a pattern of their text (spaces
# collapsed), with the reason they are acceptable. On Citus each is a multi-shard statement,
# run by the coordinator over every shard: correct, only not confined to one shard.
EXCEPTIONS: dict[str, str] = {
    r"^WITH ready AS \( SELECT user_id, id FROM jobs WHERE \(state = 'pending'": (
        "job claiming: a worker takes the next due job of any tenant (SKIP LOCKED); the"
        " claimed rows are then updated joined on user_id"
    ),
    r"\b(FROM|UPDATE) jobs (SET .* )?WHERE id = \$\d+|FROM job_steps WHERE job_id = ": (
        "a job addressed by its id alone: the worker's own claimed job (its state, lease and"
        " steps) and an operator's retry; job ids are unique across tenants"
    ),
    r"^SELECT \* FROM jobs WHERE (?:true|1 = 1) ORDER BY id DESC": (
        "GET /v1/jobs without a tenant: the operators' view of every job"
    ),
    r"^SELECT state, count\(\*\) AS n FROM jobs WHERE (?:true|1 = 1) GROUP BY state$": (
        "GET /v1/jobs/stats without a tenant and /health: job counts over every tenant"
    ),
    r"^SELECT coalesce\(sum\(memories\) - sum\(vectors\), 0\)::bigint AS n FROM tenant_counts$": (
        "/health: memories still waiting for their vector, over every tenant"
    ),
    r"^SELECT user_id, scope_id, count\(\*\) AS n, .* FROM memories WHERE (?:true|1 = 1)"
    r" GROUP BY user_id, scope_id": (
        "GET /v1/tenants: the operators' list of tenants and their sizes"
    ),
    r"^SELECT user_id, scope_id FROM (memories|history) WHERE (id|memory_id) = \$1 LIMIT 1$": (
        "the id-only routes (JiuwenMemory's update/delete by id) find the tenant of a memory"
        " id once; every statement after it is routed"
    ),
    r"^SELECT seq( AS n)?, id, user_id, scope_id, (text|name, type) FROM (memories m|entities)"
    r" WHERE seq > \$1": (
        "maintenance over every tenant's rows in batches (reindex, the word-vector table)"
    ),
    r"^SELECT pg_current_snapshot\(\)::text AS snap, .* FROM kw_log\)": (
        "the keyword caches' catch-up: one change log for every tenant (kw_log), read in id"
        " order by each process's posting lists (a multi-shard read on Citus)"
    ),
    r"^DELETE FROM jobs WHERE id IN \(SELECT id FROM jobs WHERE state IN \('done', 'failed'\)": (
        "job retention: a job-running process deletes every tenant's jobs that ended longer"
        " ago than OMOIDE_JOB_RETENTION_DAYS, in batches"
    ),
    r"\bFROM dreaming_schedules WHERE (enabled|true|1 = 1)\b": (
        "the dreaming scheduler's next due time and its status page: every tenant's schedule"
    ),
}


@pytest.fixture
def logged_url(pg_server: str) -> tuple[str, Path]:
    """A fresh schema whose connections log every statement, and the server's log file."""
    schema = f"routing_{uuid.uuid4().hex[:12]}"
    with connect(pg_server) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        conn.execute(f"CREATE SCHEMA {schema}")
        row = conn.execute("SHOW data_directory").fetchone()
    assert row is not None
    log = Path(row["data_directory"]) / "log"
    if not log.exists():
        pytest.skip(f"the server's log is not at {log}")
    options = quote(f"-csearch_path={schema},public -clog_statement=all")
    base = server_url()
    return f"{base}{'&' if '?' in base else '?'}options={options}", log


def _scenario(http: httpx.Client) -> dict[str, str]:
    """Real data through each interface; the ids it made, by path parameter name."""
    ids: dict[str, str] = {}
    user = {"user_id": "alice", "scope_id": "home"}
    made = http.post(
        "/v1/memories",
        json={
            **user,
            "session_id": "s1",
            "messages": [
                {"role": "user", "content": "I adopted a cat named Mochi last spring"},
                {"role": "assistant", "content": "Mochi is a lovely name"},
            ],
        },
    )
    assert made.status_code < 300, made.text
    items = made.json().get("items") or made.json().get("memories") or []
    if items:
        ids["memory_id"] = items[0]["id"]
    http.post("/v1/memories", json={**user, "text": "Alice drinks green tea every morning"})
    http.post("/v1/memories/search", json={**user, "query": "what pet does Alice have"})
    http.post("/v1/context", json={**user, "query": "tea"})
    http.post(
        "/add_messages/",
        json={"user_id": "bob", "scope_id": "s", "messages": [{"role": "user", "content": "hi"}]},
    )
    http.post("/search_memory/", json={"user_id": "bob", "scope_id": "s", "query": "hi"})
    http.post(
        "/update_variables/",
        json={"user_id": "bob", "scope_id": "s", "variables": {"city": "Kyoto"}},
    )
    session = http.post("/sessions", json={"name": "trip", "project": "p1"})
    if session.status_code < 300:
        ids["session_id"] = str(session.json().get("id", ""))
    http.post(
        "/v1/discussions/d1/quality-memory",
        json={"messages": [{"role": "user", "content": "we discussed the garden"}]},
    )
    return ids


def _walk(http: httpx.Client, ids: dict[str, str]) -> int:
    """Every operation of the OpenAPI document once, with a minimal body; how many."""
    spec = http.get("/openapi.json").json()
    schemas = Schemas(spec)
    ops = operations(spec)
    # deletions last, so the other operations still find the data
    for op in sorted(ops, key=lambda o: o.method == "DELETE"):
        values = {
            p["name"]: ids.get(p["name"], str(schemas.example(p["schema"])))
            for p in op.params
            if p.get("required") or p["in"] == "path"
        }
        body = schemas.example(op.body) if op.body is not None else None
        http.request(
            op.method,
            op.url(values),
            content=dumps(body) if body is not None else None,
            headers={"content-type": "application/json"},
        )
    return len(ops)


def _tenant_tables(url: str) -> set[str]:
    with connect(url) as conn:
        found = conn.execute(
            "SELECT table_name FROM information_schema.columns"
            " WHERE table_schema = current_schema() AND column_name = 'user_id'"
        ).fetchall()
    return {r["table_name"] for r in found}


def _excused(sql: str) -> str | None:
    flat = " ".join(sql.split())
    for pattern, reason in EXCEPTIONS.items():
        if re.search(pattern, flat, re.IGNORECASE | re.DOTALL):
            return reason
    return None


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_every_tenant_statement_of_the_api_is_routable(logged_url: tuple[str, Path]) -> None:
    url, log = logged_url
    memory = Memory(url, embedder=HashEmbedder(), workers=1)  # migrated before the log starts
    start = log.stat().st_size
    server: Running
    with running(Path("unused.db"), memory.embedder, engine=memory) as server:
        with server.http() as http:
            ids = _scenario(http)
            walked = _walk(http, ids)
        server.engine.run_jobs()
    text = log.read_bytes()[start:].decode("utf-8", "replace")
    statements = logged_statements(text)
    tenants = _tenant_tables(url)
    assert walked > 80 and len(statements) > 500, (walked, len(statements))
    assert {"memories", "memory_terms", "jobs", "sessions"} <= tenants
    bad: dict[str, list[str]] = {}
    excused: dict[str, int] = {}
    for sql in statements:
        problems = unrouted(sql, tenants)
        if not problems:
            continue
        reason = _excused(sql)
        if reason is not None:
            excused[reason] = excused.get(reason, 0) + 1
        else:
            bad.setdefault(" ".join(sql.split())[:300], problems)
    assert not bad, "\n\n".join(f"{k}\n  -> {v}" for k, v in bad.items())
    assert excused  # the exceptions are real: job claiming at least ran


TENANTS = {"memories", "memory_vectors", "jobs"}


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT id FROM memories WHERE user_id = $1 AND id = $2", []),
        ("SELECT id FROM memories WHERE id = $1", ["memories memories"]),
        ("SELECT id FROM memories WHERE user_id = $1 OR id = $2", ["memories memories"]),
        ("SELECT id FROM memories WHERE user_id = ANY($1)", ["memories memories"]),
        (
            "SELECT m.id FROM memories m JOIN memory_vectors v ON v.user_id = m.user_id"
            " AND v.memory_id = m.id WHERE m.user_id = $1::text",
            [],
        ),
        (
            "SELECT m.id FROM memories m JOIN memory_vectors v ON v.memory_id = m.id"
            " WHERE m.user_id = $1",
            ["memory_vectors v"],
        ),
        (  # a filter in one CTE does not route the same alias in another
            "WITH a AS (SELECT m.id FROM memories m WHERE m.user_id = $1),"
            " b AS (SELECT m.id FROM memories m) SELECT * FROM a, b",
            ["memories m"],
        ),
        (  # a correlated subquery joins on the outer, routed row
            "SELECT m.id FROM memories m WHERE m.user_id = $1 AND EXISTS"
            " (SELECT 1 FROM memory_vectors v WHERE v.user_id = m.user_id)",
            [],
        ),
        ("UPDATE jobs SET state = 'x' WHERE id = $1", ["jobs jobs"]),
        ("DELETE FROM memories WHERE user_id = $1 AND scope_id = $2", []),
        ("INSERT INTO memories (id, user_id) VALUES ($1, $2)", []),
        ("INSERT INTO memories (id) VALUES ($1)", ["INSERT INTO memories without user_id"]),
        ("SELECT * FROM meta WHERE key = $1", []),
    ],
)
def test_the_checker_tells_routed_from_unrouted(sql: str, expected: list[str]) -> None:
    assert unrouted(sql, TENANTS) == expected


def test_the_log_reader_keeps_multiline_statements() -> None:
    log = (
        "2026-12-06 15:00:00.001 UTC [42] LOG:  statement: BEGIN\n"
        "2026-12-06 15:00:00.002 UTC [42] LOG:  execute <unnamed>: SELECT 1\n"
        "\tFROM memories\n"
        "2026-12-06 15:00:00.003 UTC [42] DETAIL:  Parameters: $1 = 'a'\n"
        "2026-12-06 15:00:00.004 UTC [42] ERROR:  boom\n"
        "2026-12-06 15:00:00.005 UTC [42] LOG:  execute _pg3_0: SELECT 2\n"
    )
    assert logged_statements(log) == ["BEGIN", "SELECT 1\n\tFROM memories", "SELECT 2"]
