"""Consolidation: candidates scored as in the nexusAI seed, and the pass itself: a dry run
changes nothing, a run does exactly what its dry run reported, a second run is a no-op,
orphaned entities are swept, another tenant is never touched, and a revert restores it all."""

from __future__ import annotations

from pathlib import Path

import pytest

from omoide import FeatureDisabled, Memory, MemoryType, SearchFilters
from omoide.engine.consolidation.service import DAY_MS, score_episodes
from omoide.store.protocol import EpisodeStat
from omoide.types import Scope, now_ms
from tests import sql
from tests.fakes import FakeLLMServer
from tests.knowledge.conftest import api_client, summary_reply

EPISODES = 12


def fill(memory: Memory, user: str) -> dict[str, str]:
    """12 exchanges in session ``s``; the last two read recently (high score); entity
    ``Old`` known only from episode 0, ``Shared`` from episodes 0 and 11, and an edge."""
    for n in range(EPISODES):
        pair = [
            {"role": "user", "content": f"{user} old story number {n}"},
            {"role": "assistant", "content": f"noted story {n}"},
        ]
        memory.add(pair, user_id=user, session_id="s", infer=False)
    episodes = [e.id for e in memory.list_episodes("s", user_id=user)[0]]
    memory.touch_episodes(episodes[-2:], user_id=user)
    scope = Scope(user_id=user)
    with memory.store.transaction() as tx:
        old = tx.graph.upsert_entity(scope, "Old", "thing", now_ms(), episodes[0])
        shared = tx.graph.upsert_entity(scope, "Shared", "thing", now_ms(), episodes[0])
        tx.graph.upsert_entity(scope, "Shared", "thing", now_ms(), episodes[-1])
        edge = tx.graph.upsert_relationship(scope, old.id, shared.id, "near", None, now_ms())
    return {"old": old.id, "shared": shared.id, "edge": edge.id, "first": episodes[0]}


def dump(memory: Memory, user: str | None = None) -> list[str]:
    """Every row of the database (or only those of ``user``), as text."""
    rows = sql.dump(memory.store)
    return rows if user is None else [r for r in rows if f"'{user}'" in r]


ARGS = {"user_id": "alice", "min_age_days": 0}


@pytest.fixture
def filled(mem: Memory) -> tuple[Memory, dict[str, str]]:
    ids = fill(mem, "alice")
    fill(mem, "bob")
    return mem, ids


def test_candidates_score_as_the_seed_says() -> None:
    now = 100 * DAY_MS
    stats = [
        EpisodeStat("never", now - 10 * DAY_MS, 0, None, False),
        EpisodeStat("read 3 days ago", now - 10 * DAY_MS, 2, now - 3 * DAY_MS, False),
        EpisodeStat("read now", now - 10 * DAY_MS, 3, now, False),
        EpisodeStat("too young", now - DAY_MS, 0, None, False),
        EpisodeStat("done", now - 10 * DAY_MS, 0, None, True),
    ]
    scored = score_episodes(stats, now, min_age_days=2)
    assert [(c.episode_id, c.score) for c in scored] == [
        ("never", 0.0),
        ("read 3 days ago", 0.5),  # 2 / (1 + 3)
        ("read now", 3.0),
    ]


def test_the_session_floor_and_the_age_floor(filled: tuple[Memory, dict[str, str]]) -> None:
    memory, _ = filled
    ranked = memory.consolidation_candidates("s", **ARGS)
    assert ranked.eligible and ranked.episode_count == EPISODES
    assert [c.score for c in ranked.candidates][:10] == [0.0] * 10
    assert ranked.candidates[-1].score == pytest.approx(1.0, abs=0.01)
    floor = memory.consolidation_candidates("s", **ARGS, min_session_episodes=EPISODES + 1)
    assert not floor.eligible and floor.candidates == [] and "at least 13" in (floor.reason or "")
    young = memory.consolidation_candidates("s", user_id="alice")  # default: 7 days old
    assert young.eligible and young.candidates == []
    assert not memory.consolidate("s", user_id="alice", min_session_episodes=99).eligible


def test_dry_run_changes_nothing_and_the_run_matches_it(
    filled: tuple[Memory, dict[str, str]], fake_llm: FakeLLMServer
) -> None:
    memory, ids = filled
    before, bob_before = dump(memory), dump(memory, "bob")
    dry = memory.consolidate("s", **ARGS)
    assert dump(memory) == before and fake_llm.requests == []
    assert dry.dry_run and dry.eligible and dry.id is None
    assert len(dry.episodes) == EPISODES - 2 and len(dry.memories) == 2 * (EPISODES - 2)
    assert dry.vectors == dry.memories
    assert dry.entities == [ids["old"]] and dry.relationships == [ids["edge"]]

    summary_reply(fake_llm, "Alice told ten old stories.")
    done = memory.consolidate("s", **ARGS, run=True)
    fields = ("episodes", "memories", "vectors", "entities", "relationships")
    assert {f: getattr(done, f) for f in fields} == {f: getattr(dry, f) for f in fields}
    assert not done.dry_run and done.id and done.summary == "Alice told ten old stories."
    assert "alice old story number 0" in fake_llm.requests[0]["messages"][-1]["content"]

    summary = memory.get_summary(done.summary_id, user_id="alice")  # type: ignore[arg-type]
    assert sorted(summary.source_episodes) == sorted(done.episodes) and summary.embedded
    assert summary.metadata["summary_kind"] == "consolidation"
    for memory_id in done.memories:
        item = memory.get(memory_id, user_id="alice")
        assert item.invalid_at is not None and not item.embedded
        assert memory.history(memory_id, user_id="alice")[-1].actor == "consolidation"
    hits = memory.search("old story number", user_id="alice", limit=50).hits
    assert {h.memory.id for h in hits}.isdisjoint(done.memories)
    assert summary.id in {
        h.memory.id for h in memory.search("ten old stories", user_id="alice").hits
    }
    episodes = {e.id: e for e in memory.list_episodes("s", user_id="alice")[0]}
    assert sum(e.consolidated_at is not None for e in episodes.values()) == EPISODES - 2
    entities = {e.name for e in memory.list_entities(user_id="alice")[0]}
    assert entities == {"Shared"}  # Old had no provenance left; Shared has episode 11
    assert memory.list_relationships(user_id="alice")[1] == 0
    assert dump(memory, "bob") == bob_before

    again = memory.consolidate("s", **ARGS, run=True)  # no LLM reply queued: must not call
    assert again.episodes == [] and again.entities == [] and again.id is None
    assert len(fake_llm.requests) == 1
    ranked = memory.consolidation_candidates("s", **ARGS)
    assert ranked.episode_count == 2 and not ranked.eligible


def test_revert_restores_everything(
    filled: tuple[Memory, dict[str, str]], fake_llm: FakeLLMServer
) -> None:
    memory, ids = filled
    summary_reply(fake_llm, "Old stories.")
    done = memory.consolidate("s", **ARGS, run=True)
    restored = memory.revert_consolidation(done.id, user_id="alice")  # type: ignore[arg-type]
    assert sorted(restored["memories"]) == sorted(done.memories)
    assert restored["entities"] == [ids["old"]]
    memory.run_jobs()
    for memory_id in done.memories:
        item = memory.get(memory_id, user_id="alice")
        assert item.invalid_at is None and item.embedded
    assert memory.get_summary(done.summary_id, user_id="alice").invalid_at is not None  # type: ignore[arg-type]
    assert {e.name for e in memory.list_entities(user_id="alice")[0]} == {"Old", "Shared"}
    old = memory.get_entity(ids["old"], user_id="alice")
    assert old.episodes == [ids["first"]]
    [edge] = memory.list_relationships(user_id="alice")[0]
    assert edge.id == ids["edge"]
    assert all(e.consolidated_at is None for e in memory.list_episodes("s", user_id="alice")[0])
    with pytest.raises(Exception, match="already reverted"):
        memory.revert_consolidation(done.id, user_id="alice")  # type: ignore[arg-type]
    with pytest.raises(Exception, match="not found"):
        memory.revert_consolidation(done.id, user_id="bob")  # type: ignore[arg-type]


def test_a_run_needs_an_llm_but_a_dry_run_does_not(plain: Memory) -> None:
    fill(plain, "alice")
    assert plain.consolidate("s", **ARGS).episodes
    before = dump(plain)
    with pytest.raises(FeatureDisabled, match="consolidation needs an LLM"):
        plain.consolidate("s", **ARGS, run=True)
    assert dump(plain) == before


def test_a_scheduled_job_runs_it(
    filled: tuple[Memory, dict[str, str]], fake_llm: FakeLLMServer
) -> None:
    memory, _ = filled
    memory.knowledge = memory.knowledge.model_copy(update={"min_age_days": 0})
    summary_reply(fake_llm, "Stories.")
    job_id = memory.schedule_consolidation("s", user_id="alice")
    assert memory.run_jobs() == 1
    job = memory.store.jobs.get_job(job_id)
    assert job.state.value == "done" and len(job.result["episodes"]) == EPISODES - 2  # type: ignore[index]
    summaries = memory.list_summaries("s", user_id="alice").items
    assert [s.text for s in summaries] == ["Stories."]
    assert memory.get_all(user_id="alice", filters=SearchFilters(types=[MemoryType.RAW])).total == 4


def test_routes(filled: tuple[Memory, dict[str, str]], fake_llm: FakeLLMServer) -> None:
    memory, _ = filled
    client = api_client(memory)
    params = {"session_id": "s", "user_id": "alice", "min_age_days": 0}
    ranked = client.get("/v1/consolidation/candidates", params=params).json()
    assert ranked["eligible"] and len(ranked["candidates"]) == EPISODES
    dry = client.post("/v1/consolidation", json=params).json()
    assert dry["dry_run"] and len(dry["episodes"]) == EPISODES - 2
    summary_reply(fake_llm, "Stories.")
    done = client.post("/v1/consolidation", json={**params, "run": True}).json()
    assert done["episodes"] == dry["episodes"]
    back = client.post(f"/v1/consolidation/{done['id']}/revert", json={"user_id": "alice"})
    assert back.status_code == 200 and len(back.json()["memories"]) == len(dry["memories"])
    queued = client.post("/v1/consolidation/jobs", json={"session_id": "s", "user_id": "alice"})
    assert queued.status_code == 202 and queued.json()["job_id"] > 0


def test_cli(cli, tmp_path: Path) -> None:
    from tests.knowledge.conftest import open_memory

    with open_memory(tmp_path / "data" / "omoide.db") as memory:
        fill(memory, "default")
    code, out, _ = cli("consolidate", "s")
    assert code == 0 and "would change: 0 episodes" in out  # the default: 7 days old only
    code, out, _ = cli("consolidate", "s", "--json")
    assert code == 0 and '"dry_run": true' in out
    code, _, err = cli("consolidate", "nope")
    assert code == 1 and "not found" in err
