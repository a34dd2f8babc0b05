"""Search and paging of the JiuwenMemory interface over real HTTP, with the seed document's
request bodies. They run with an LLM configured (``llm_server``): the mode in which the
extracted types are what these routes return (without one, see test_jiuwen_offline.py)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from omoide.compat.jiuwen.routes import memory_type
from omoide.types import MemoryType
from tests.api.conftest import Running
from tests.compat.test_jiuwen import (
    MINIMAL_SEARCH,
    PAGE,
    SEARCH_MEMORY,
    SEARCH_SUMMARY,
    TEA,
    UPDATE_VARIABLES,
    _ok,
    _store,
)


# search ------------------------------------------------------------------------------------
def _hits_shape(hits: list[dict[str, Any]]) -> None:
    for hit in hits:
        assert set(hit) == {"mem_id", "content", "type", "score"}
        assert isinstance(hit["mem_id"], str) and isinstance(hit["score"], float)
    scores = [h["score"] for h in hits]
    assert scores == sorted(scores, reverse=True)


def test_search_memory_finds_long_term_types_only(
    llm_server: Running, llm_http: httpx.Client
) -> None:
    server, http = llm_server, llm_http
    ids = {t: _store(server, t, text)[0] for t, text in TEA.items()}
    _store(server, MemoryType.SEMANTIC, "The user's car is a red Volvo")
    _store(server, MemoryType.SEMANTIC, "The user likes jasmine tea", user="bob")
    for body in (SEARCH_MEMORY, MINIMAL_SEARCH):
        hits = _ok(http.post("/search_memory/", json=body))["results"]
        _hits_shape(hits)
        assert ids[MemoryType.SEMANTIC] in {h["mem_id"] for h in hits}
        assert {h["type"] for h in hits} <= {"user_profile", "semantic_memory", "episodic_memory"}
        assert all(h["score"] >= 0.3 for h in hits) and len(hits) <= 5
    top = _ok(http.post("/search_memory/", json=SEARCH_MEMORY))["results"][0]
    assert top == {
        "mem_id": ids[MemoryType.SEMANTIC],
        "content": TEA[MemoryType.SEMANTIC],
        "type": "semantic_memory",
        "score": top["score"],
    }


def test_search_threshold_and_num(llm_server: Running, llm_http: httpx.Client) -> None:
    server, http = llm_server, llm_http
    for type_ in (MemoryType.SEMANTIC, MemoryType.USER_PROFILE, MemoryType.EPISODIC):
        _store(server, type_, TEA[type_])
    _store(server, MemoryType.SEMANTIC, "The user's car is a red Volvo")
    everything = _ok(http.post("/search_memory/", json=SEARCH_MEMORY | {"threshold": 0, "num": 10}))
    assert len(everything["results"]) == 4
    scores = [h["score"] for h in everything["results"]]
    # `threshold` keeps the hits scored at least that much: above the best, none is left
    between = (scores[0] + scores[-1]) / 2
    kept = _ok(http.post("/search_memory/", json=SEARCH_MEMORY | {"threshold": between}))
    assert kept["results"] == [h for h in everything["results"] if h["score"] >= between]
    assert 0 < len(kept["results"]) < 4
    above = min(1.0, scores[0] + 1e-6)
    strict = _ok(http.post("/search_memory/", json=SEARCH_MEMORY | {"threshold": above}))
    assert strict == {"results": []}
    two = _ok(http.post("/search_memory/", json=SEARCH_MEMORY | {"threshold": 0, "num": 2}))
    assert [h["mem_id"] for h in two["results"]] == [h["mem_id"] for h in everything["results"][:2]]


def test_search_defaults(llm_server: Running, llm_http: httpx.Client) -> None:
    server, http = llm_server, llm_http
    _store(
        server,
        MemoryType.SEMANTIC,
        "The user likes jasmine tea",
        user="default",  # upstream's "__default__" is omoide's default tenant
        scope="default",
    )
    hits = _ok(http.post("/search_memory/", json={"query": "jasmine tea"}))["results"]
    assert len(hits) == 1 and hits[0]["score"] >= 0.3
    assert _ok(http.post("/search_memory/", json={"query": "jasmine tea", "user_id": "x"})) == {
        "results": []
    }


def test_search_user_history_summary_finds_summaries_only(
    llm_server: Running, llm_http: httpx.Client
) -> None:
    server, http = llm_server, llm_http
    ids = {t: _store(server, t, text)[0] for t, text in TEA.items()}
    hits = _ok(http.post("/search_user_history_summary/", json=SEARCH_SUMMARY))["results"]
    _hits_shape(hits)
    assert [(h["mem_id"], h["type"]) for h in hits] == [(ids[MemoryType.SUMMARY], "summary")]
    assert hits[0]["content"] == TEA[MemoryType.SUMMARY]


# /get_user_mem_by_page/ --------------------------------------------------------------------
def test_paging_has_the_real_total_and_starts_at_1(server: Running, http: httpx.Client) -> None:
    ids = _store(server, MemoryType.SEMANTIC, *[f"fact number {i}" for i in range(25)])
    _store(server, MemoryType.SEMANTIC, "another scope", scope="other")
    seen: list[str] = []
    for page_idx, size in ((1, 10), (2, 10), (3, 5), (4, 0)):
        body = PAGE | {"page_idx": page_idx, "memory_type": "semantic"}
        page = _ok(http.post("/get_user_mem_by_page/", json=body))
        assert page["total"] == 25 and len(page["results"]) == size
        for item in page["results"]:
            assert set(item) == {"mem_id", "content", "type", "timestamp", "source_id"}
            assert item["type"] == "semantic_memory"
        seen += [item["mem_id"] for item in page["results"]]
    assert sorted(seen) == sorted(ids)
    bad = http.post("/get_user_mem_by_page/", json=PAGE | {"page_idx": 0})
    assert bad.status_code == 422


def test_paging_defaults(server: Running, http: httpx.Client) -> None:
    _store(
        server,
        MemoryType.SEMANTIC,
        *[f"fact {i}" for i in range(12)],
        user="default",  # upstream's "__default__" is omoide's default tenant
        scope="default",
    )
    page = _ok(http.post("/get_user_mem_by_page/", json={}))
    assert page["total"] == 12 and len(page["results"]) == 10


EVERY = {"user_profile", "semantic_memory", "episodic_memory", "summary", "variable"}
TYPE_CASES = [
    ("user_profile", {"user_profile"}),
    ("USER_PROFILE", {"user_profile"}),
    ("semantic_memory", {"semantic_memory"}),
    ("Semantic", {"semantic_memory"}),  # omoide's short names are aliases
    ("EPISODIC_MEMORY", {"episodic_memory"}),
    ("episodic", {"episodic_memory"}),
    ("SUMMARY", {"summary"}),
    ("variable", {"variable"}),
    ("VARIABLE", {"variable"}),
    ("middle_term_memory", set()),  # an upstream type omoide does not have
    ("UNKNOWN", EVERY),
    ("unknown", EVERY),
    ("facts", EVERY),  # upstream: MemoryType("facts") fails, so UNKNOWN, so no type filter
    ("", EVERY),
]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("USER_PROFILE", "user_profile"),
        ("Semantic_Memory", "semantic_memory"),
        ("semantic", "semantic_memory"),
        ("episodic", "episodic_memory"),
        ("Middle_Term_Memory", "middle_term_memory"),
        ("UNKNOWN", "unknown"),
        ("facts", "unknown"),
        ("", "unknown"),
        (None, "unknown"),
    ],
)
def test_memory_type_names(name: str | None, expected: str) -> None:
    assert memory_type(name) == expected


def test_paging_by_memory_type(llm_server: Running, llm_http: httpx.Client) -> None:
    server, http = llm_server, llm_http
    for type_, text in TEA.items():
        _store(server, type_, text)
    _ok(http.post("/update_variables/", json=UPDATE_VARIABLES))
    for name, types in TYPE_CASES:
        reply = http.post("/get_user_mem_by_page/", json=PAGE | {"memory_type": name})
        page = _ok(reply)
        assert {item["type"] for item in page["results"]} == types, name
        assert ("x-omoide-warning" in reply.headers) == (name == "facts"), name
        assert page["total"] == len(page["results"]) == len(types) + ("variable" in types)
    variables = _ok(http.post("/get_user_mem_by_page/", json=PAGE | {"memory_type": "variable"}))
    untimed = {"timestamp": None, "source_id": None}
    assert variables["results"] == [
        {"mem_id": "var:city", "content": "city: Shenzhen", "type": "variable", **untimed},
        {
            "mem_id": "var:favorite_drink",
            "content": "favorite_drink: jasmine tea",
            "type": "variable",
            **untimed,
        },
    ]


def test_paging_runs_from_memories_into_variables(server: Running, http: httpx.Client) -> None:
    _store(server, MemoryType.SEMANTIC, "fact a", "fact b", "fact c")
    _ok(http.post("/update_variables/", json=UPDATE_VARIABLES))
    pages = [
        _ok(http.post("/get_user_mem_by_page/", json=PAGE | {"page_size": 2, "page_idx": i}))
        for i in (1, 2, 3)
    ]
    assert [p["total"] for p in pages] == [5, 5, 5]
    assert [[item["type"] for item in p["results"]] for p in pages] == [
        ["semantic_memory", "semantic_memory"],
        ["semantic_memory", "variable"],
        ["variable"],
    ]
