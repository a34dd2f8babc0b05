"""``GET /metrics`` in the Prometheus text format (``prometheus-client``), when enabled.

Off unless ``OMOIDE_METRICS=true``; behind the full-access API key: the figures are the whole
server's (every tenant's jobs and store size), so a tenant-bound key gets 403. Each app has its
own registry, so several apps in one process (tests, embedding) never collide.

Recorded per request (``RequestMetrics``, a pure ASGI middleware outside authentication, so
refused calls count too), labelled by method (``other`` for any but the standard ones:
uvicorn takes any token as a method, and each new label value would be series kept forever),
route template (``/v1/memories/{memory_id}``; ``unmatched`` for an unknown path, or a
parameterised one refused before routing with 401, 413 or 415, so a scan cannot blow up the
label set) and status:

    omoide_http_requests_total, omoide_http_request_duration_seconds

Read from the engine at each scrape (``EngineCollector``), through the calls the routes use:

    omoide_jobs{state}                     jobs per state (pending, running, done, failed)
    omoide_job_queue{kind,state}           unfinished and failed jobs per kind (first 1000
                                           of each state)
    omoide_component_up{component}         1 ok, 0 down: store, embedder, llm
    omoide_store_bytes                     the store on disk (SQLite: the file with its -wal and
                                           -shm files; PostgreSQL: the schema's tables)

Reported by the engine as they happen (``CallMetrics``, the ``omoide.observe.Observer`` the
app hands to the ``Memory`` it builds; an app given an engine gets them when that engine was
built with the same ``CallMetrics``, ``create_app(settings, memory, calls=...)``):

    omoide_embed_call_duration_seconds{outcome}   each embedder call (outcome ok or error)
    omoide_embed_call_errors_total{error}         failed embedder calls by error class
    omoide_llm_call_duration_seconds{outcome}     each HTTP request to the LLM endpoint
    omoide_llm_call_errors_total{error}           failed LLM requests by error class
    omoide_job_batch_duration_seconds{kind}       each batch a job handler ran
    omoide_job_runs_total{kind,outcome}           each job run: done, retried, deferred
                                                  (an LLM outage), failed
    omoide_job_failures_total{kind,outcome}       the runs that did not end done
"""

from __future__ import annotations

import logging
import time
from collections import Counter as Tally
from collections.abc import Callable, Iterator
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import generate_latest
from prometheus_client.registry import Collector
from starlette.routing import BaseRoute
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from omoide.errors import Forbidden
from omoide.memory import Memory
from omoide.observe import JobOutcome
from omoide.types import JobState

log = logging.getLogger("omoide.api")

PATH = "/metrics"
QUEUE_STATES = (JobState.PENDING, JobState.RUNNING, JobState.FAILED)
QUEUE_SAMPLE = 1000
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


class Metrics:
    """The app's registry and the request instruments."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        labels = ("method", "route", "status")
        self.requests = Counter(
            "omoide_http_requests",
            "HTTP requests answered.",
            labels,
            registry=self.registry,
        )
        self.latency = Histogram(
            "omoide_http_request_duration_seconds",
            "Time from request to the end of the response.",
            labels,
            buckets=BUCKETS,
            registry=self.registry,
        )

    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        labels = (method, route, str(status))
        self.requests.labels(*labels).inc()
        self.latency.labels(*labels).observe(seconds)


class CallMetrics(Collector):
    """The Prometheus ``Observer``: the engine's calls and job runs as histograms and counters.

    A collector with unregistered instruments, so one instance can be shared by an engine and
    registered with the app's registry whoever built it."""

    def __init__(self) -> None:
        self.embed = Histogram(
            "omoide_embed_call_duration_seconds",
            "Time of each embedder call.",
            ("outcome",),
            buckets=BUCKETS,
            registry=None,
        )
        self.embed_errors = Counter(
            "omoide_embed_call_errors", "Failed embedder calls.", ("error",), registry=None
        )
        self.llm = Histogram(
            "omoide_llm_call_duration_seconds",
            "Time of each HTTP request to the LLM endpoint.",
            ("outcome",),
            buckets=(*BUCKETS, 120.0, 300.0),
            registry=None,
        )
        self.llm_errors = Counter(
            "omoide_llm_call_errors", "Failed LLM requests.", ("error",), registry=None
        )
        self.batch = Histogram(
            "omoide_job_batch_duration_seconds",
            "Time of each batch of jobs a handler ran.",
            ("kind",),
            buckets=(*BUCKETS, 120.0, 300.0),
            registry=None,
        )
        self.runs = Counter(
            "omoide_job_runs", "Job runs by what became of the job.", ("kind", "outcome"),
            registry=None,
        )  # fmt: skip
        self.failures = Counter(
            "omoide_job_failures", "Job runs that did not end done.", ("kind", "outcome"),
            registry=None,
        )  # fmt: skip

    def embed_call(self, seconds: float, error: str | None) -> None:
        self.embed.labels("ok" if error is None else "error").observe(seconds)
        if error is not None:
            self.embed_errors.labels(error).inc()

    def llm_call(self, seconds: float, error: str | None) -> None:
        self.llm.labels("ok" if error is None else "error").observe(seconds)
        if error is not None:
            self.llm_errors.labels(error).inc()

    def job_batch(self, kind: str, seconds: float) -> None:
        self.batch.labels(kind).observe(seconds)

    def job_outcome(self, kind: str, outcome: JobOutcome) -> None:
        self.runs.labels(kind, outcome).inc()
        if outcome != "done":
            self.failures.labels(kind, outcome).inc()

    def collect(self) -> Iterator[Metric]:
        for part in (self.embed, self.embed_errors, self.llm, self.llm_errors, self.batch):
            yield from part.collect()
        yield from self.runs.collect()
        yield from self.failures.collect()


class RequestMetrics:
    """Times every HTTP request and counts it by route template and status."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics
        self._exact: frozenset[str] | None = None  # the app's parameterless route paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500  # what the client gets if the app raises before it answers

        async def send_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, send_status)
        finally:
            elapsed = time.perf_counter() - started
            method = scope["method"] if scope["method"] in METHODS else "other"
            self.metrics.observe(method, self._template(scope), status, elapsed)

    def _template(self, scope: Scope) -> str:
        path = getattr(scope.get("route"), "path", None)
        if isinstance(path, str):
            return path
        # FastAPI records only its own routes in the scope; a plain route (/mcp) and a request
        # refused before routing (401) are known by their path when it is a fixed one. An
        # included router's routes are not in ``app.routes`` (FastAPI keeps the router whole),
        # so the OpenAPI paths name them.
        if self._exact is None:
            app = scope.get("app")
            routes: list[BaseRoute] = getattr(app, "routes", [])
            paths = {getattr(route, "path", None) for route in routes}
            openapi = getattr(app, "openapi", None)
            if callable(openapi):
                paths |= set(openapi().get("paths", {}))
            self._exact = frozenset(p for p in paths if isinstance(p, str) and "{" not in p)
        return str(scope["path"]) if scope["path"] in self._exact else "unmatched"


class EngineCollector(Collector):
    """Gauges read from the engine at scrape time; a failing read is logged, not raised."""

    def __init__(self, engine_of: Callable[[], Memory | None]) -> None:
        self.engine_of = engine_of

    def collect(self) -> Iterator[Metric]:
        engine = self.engine_of()
        if engine is None:  # not started yet
            return
        try:
            report = engine.health()
            queue = _queue(engine)
            size = engine.store.admin.size_bytes()
        except Exception:  # a scrape must not fail because the store is down
            log.exception("metrics: reading the engine failed")
            return
        yield from _health_metrics(report)
        yield GaugeMetricFamily(
            "omoide_store_bytes", "Size of the store on disk.", value=float(size)
        )
        family = GaugeMetricFamily(
            "omoide_job_queue",
            f"Unfinished and failed jobs per kind (first {QUEUE_SAMPLE} of each state).",
            labels=["kind", "state"],
        )
        for (kind, state), count in sorted(queue.items()):
            family.add_metric([kind, state], count)
        yield family


def _queue(engine: Memory) -> Tally[tuple[str, str]]:
    tally: Tally[tuple[str, str]] = Tally()
    for state in QUEUE_STATES:
        for job in engine.list_jobs(state=state, limit=QUEUE_SAMPLE):
            tally[(job.kind, state.value)] += 1
    return tally


def _health_metrics(report: dict[str, Any]) -> Iterator[Metric]:
    jobs = GaugeMetricFamily("omoide_jobs", "Jobs per state.", labels=["state"])
    for state, count in sorted(report.get("jobs", {}).items()):
        jobs.add_metric([state], count)
    yield jobs
    up = GaugeMetricFamily(
        "omoide_component_up", "1 when the part is ok, 0 when down.", labels=["component"]
    )
    for part in ("store", "embedder", "llm"):
        status = report.get(part, {}).get("status")
        if status in ("ok", "down"):
            up.add_metric([part], 1.0 if status == "ok" else 0.0)
    yield up


def install(app: FastAPI, metrics: Metrics, calls: CallMetrics) -> None:
    """Serve ``GET /metrics`` from ``metrics.registry``, with the engine's gauges and calls."""
    metrics.registry.register(EngineCollector(lambda: getattr(app.state, "memory", None)))
    metrics.registry.register(calls)

    @app.get(PATH, include_in_schema=False)
    def scrape(request: Request) -> Response:
        if getattr(request.state, "tenant", None) is not None:
            raise Forbidden("/metrics shows every tenant's figures: it needs the full-access key")
        return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)
