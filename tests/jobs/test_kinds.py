"""Job kinds: rows written by older code still parse; the stored form is stable."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import Field

from omoide.errors import InvalidInput, OmoideError
from omoide.jobs.errors import InvalidJobPayload
from omoide.jobs.kinds import (
    CHUNK,
    CONSOLIDATE,
    DREAM_SWEEP,
    EMBED,
    EMBED_ENTITIES,
    EXPIRY_DELETE,
    EXPIRY_REFRESH,
    EXTRACT,
    KINDS,
    ChunkPayload,
    ConsolidatePayload,
    EmbedEntitiesPayload,
    EmbedPayload,
    ExtractPayload,
    JobKind,
    Payload,
)
from omoide.jobs.queue import enqueue, has_pending
from omoide.store import Store
from tests.jobs.conftest import SCOPE, enqueue_raw

# Payloads exactly as the engine wrote them before they were typed (no "v").
OLD_ROWS: list[tuple[str, dict[str, Any], Payload]] = [
    ("embed", {"memory_ids": ["m1", "m2"]}, EmbedPayload(memory_ids=["m1", "m2"])),
    ("embed_entities", {"entity_ids": ["e1"]}, EmbedEntitiesPayload(entity_ids=["e1"])),
    ("chunk", {"session_id": "s"}, ChunkPayload(session_id="s")),
    ("chunk", {"session_id": "s", "now": True}, ChunkPayload(session_id="s", now=True)),
    (
        "consolidate",
        {"session_id": "s", "max_score": None},
        ConsolidatePayload(session_id="s"),
    ),
    (
        "consolidate",
        {"session_id": "s", "max_score": 0.5},
        ConsolidatePayload(session_id="s", max_score=0.5),
    ),
    (
        "extract",
        {
            "steps": ["episodic", "variables"],
            "variables": [{"name": "city", "description": "Where the user lives"}],
            "metadata": {"source": "chat"},
            "episode_id": "ep1",
            "session_id": "s",
            "memory_ids": ["m1"],
        },
        ExtractPayload(
            steps=["episodic", "variables"],
            variables=[{"name": "city", "description": "Where the user lives"}],
            metadata={"source": "chat"},
            episode_id="ep1",
            session_id="s",
            memory_ids=["m1"],
        ),
    ),
    (
        "extract",
        {
            "steps": ["semantic"],
            "variables": [],
            "metadata": {},
            "episode_id": None,
            "session_id": None,
            "memory_ids": ["m1"],
        },
        ExtractPayload(steps=["semantic"], memory_ids=["m1"]),
    ),
]


@pytest.mark.parametrize(("kind", "stored", "expected"), OLD_ROWS)
def test_rows_written_before_payloads_were_typed_still_parse(
    store: Store, kind: str, stored: dict[str, Any], expected: Payload
) -> None:
    job_id = enqueue_raw(store, kind, stored)
    parsed = KINDS[kind].parse(store.jobs.get_job(job_id))
    assert parsed == expected and parsed.v == 1


def test_kinds_keep_the_names_stored_on_existing_rows() -> None:
    assert {k: v.name for k, v in KINDS.items()} == {
        "embed": EMBED.name,
        "embed_entities": EMBED_ENTITIES.name,
        "extract": EXTRACT.name,
        "chunk": CHUNK.name,
        "consolidate": CONSOLIDATE.name,
        "expiry_refresh": EXPIRY_REFRESH.name,
        "expiry_delete": EXPIRY_DELETE.name,
        "dream_sweep": DREAM_SWEEP.name,
    }
    assert set(KINDS) == {
        *("embed", "embed_entities", "extract", "chunk", "consolidate"),
        *("expiry_refresh", "expiry_delete", "dream_sweep"),
    }


def test_enqueue_stores_what_the_engine_stored(store: Store) -> None:
    with store.transaction() as tx:
        chunk = enqueue(tx.jobs, SCOPE, CHUNK, ChunkPayload(session_id="s"))
        embed = enqueue(tx.jobs, SCOPE, EMBED, EmbedPayload(memory_ids=["m1"]))
    assert store.jobs.get_job(chunk).payload == {"session_id": "s"}
    assert store.jobs.get_job(embed).payload == {"memory_ids": ["m1"]}
    assert store.jobs.get_job(embed).max_attempts == EMBED.policy.max_attempts


def test_a_row_written_before_typing_counts_as_the_same_pending_job(store: Store) -> None:
    enqueue_raw(store, "chunk", {"session_id": "s"})
    with store.transaction() as tx:
        assert has_pending(tx.jobs, SCOPE, CHUNK, ChunkPayload(session_id="s"))
        assert not has_pending(tx.jobs, SCOPE, CHUNK, ChunkPayload(session_id="other"))
        assert not has_pending(tx.jobs, SCOPE, CHUNK, ChunkPayload(session_id="s", now=True))


class NoteV1(Payload):
    text: str


class NoteV2(Payload):
    v: int = 2
    body: str
    tags: list[str] = Field(default_factory=list)


def _rename_text(data: dict[str, Any]) -> dict[str, Any]:
    return {"body": data.pop("text"), **data}


def test_a_newer_payload_version_upgrades_older_rows(store: Store) -> None:
    old = JobKind("note", NoteV1)
    new = JobKind("note", NoteV2, upgrades={1: _rename_text})
    with store.transaction() as tx:
        v1 = enqueue(tx.jobs, SCOPE, old, NoteV1(text="hello"))
        v2 = enqueue(tx.jobs, SCOPE, new, NoteV2(body="hi", tags=["a"]))
    assert store.jobs.get_job(v2).payload == {"body": "hi", "tags": ["a"], "v": 2}
    assert new.parse(store.jobs.get_job(v1)) == NoteV2(body="hello")
    assert new.parse(store.jobs.get_job(v2)) == NoteV2(body="hi", tags=["a"])
    with pytest.raises(
        InvalidJobPayload, match="payload version 2; this code reads up to version 1"
    ):
        old.parse(store.jobs.get_job(v2))  # code rolled back: fails that job, not the worker
    missing = JobKind("note", NoteV2)
    with pytest.raises(InvalidJobPayload, match="payload version 1, which has no upgrade"):
        missing.parse(store.jobs.get_job(v1))


def test_a_job_of_another_kind_is_refused(store: Store) -> None:
    job_id = enqueue_raw(store, "embed", {"memory_ids": ["m1"]})
    with pytest.raises(InvalidJobPayload, match=r"is a 'embed' job, not 'chunk'"):
        CHUNK.parse(store.jobs.get_job(job_id))


def test_invalid_job_payload_is_an_invalid_input() -> None:
    assert issubclass(InvalidJobPayload, InvalidInput)
    assert issubclass(InvalidJobPayload, OmoideError)
