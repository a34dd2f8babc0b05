"""/metrics reports the engine's own calls: embed and LLM call latency and errors, job run time
and failures by kind, scraped over real HTTP from a server that built its engine from settings
(the path of ``omoide serve``), with the fake LLM answering the extraction."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from omoide.serve.app import create_app
from tests.api.conftest import LiveServer, make_settings
from tests.fakes import FakeLLMServer

FACTS_ONLY = {
    "enable_user_profile": False,
    "enable_episodic_memory": False,
    "enable_summary_memory": False,
    "enable_graph": False,
}
CHAT = [
    {"role": "user", "content": "I moved to Porto last spring."},
    {"role": "assistant", "content": "How do you like it?"},
]


@pytest.fixture
def url(tmp_path: Path, fake_llm: FakeLLMServer) -> Iterator[str]:
    settings = make_settings(
        metrics=True,
        data_dir=tmp_path,
        embedder="hash",
        llm_base_url=fake_llm.url,
        llm_model="fake-model",
        llm_timeout=30.0,
    )
    live = LiveServer(create_app(settings)).start()
    try:
        yield live.url
    finally:
        live.stop()


def _wait_done(http: httpx.Client, bound_s: float = 60.0) -> list[dict[str, object]]:
    deadline = time.monotonic() + bound_s
    while True:
        jobs = http.get("/v1/jobs", params={"user_id": "u"}).json()["items"]
        if jobs and all(j["state"] in ("done", "failed") for j in jobs):
            return list(jobs)
        assert time.monotonic() < deadline, jobs
        time.sleep(0.05)  # polling an observable state, bounded above


def _samples(text: str) -> tuple[set[str], list[Sample]]:
    families = list(text_string_to_metric_families(text))
    return {f.name for f in families}, [s for f in families for s in f.samples]


def _total(samples: list[Sample], name: str, **labels: str) -> float:
    return sum(s.value for s in samples if s.name == name and labels.items() <= s.labels.items())


def test_scrape_reports_embed_llm_and_job_calls(url: str, fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue_fault("http_500")  # the first extraction request fails: retried
    fake_llm.enqueue(json.dumps({"facts": ["The user lives in Porto"]}))
    with httpx.Client(base_url=url, timeout=60) as http:
        added = http.post("/v1/memories", json={"messages": CHAT, "user_id": "u", **FACTS_ONLY})
        assert added.status_code == 201, added.text
        found = http.post("/v1/memories/search", json={"query": "Porto", "user_id": "u"})
        assert found.status_code == 200
        jobs = _wait_done(http)
        assert {j["kind"] for j in jobs} >= {"extract"}
        assert all(j["state"] == "done" for j in jobs), jobs
        names, samples = _samples(http.get("/metrics").text)

    assert _total(samples, "omoide_embed_call_duration_seconds_count", outcome="ok") >= 2
    assert "omoide_embed_call_errors" in names  # the family is there, with no error yet
    assert _total(samples, "omoide_llm_call_duration_seconds_count", outcome="ok") >= 1
    assert _total(samples, "omoide_llm_call_duration_seconds_count", outcome="error") >= 1
    assert _total(samples, "omoide_llm_call_errors_total", error="InternalServerError") == 1
    assert _total(samples, "omoide_job_batch_duration_seconds_count", kind="extract") >= 2
    assert _total(samples, "omoide_job_batch_duration_seconds_sum", kind="extract") > 0
    assert _total(samples, "omoide_job_runs_total", kind="extract", outcome="done") == 1
    assert _total(samples, "omoide_job_runs_total", kind="extract", outcome="retried") == 1
    assert _total(samples, "omoide_job_failures_total", kind="extract", outcome="retried") == 1
