"""``WilmerExporter``: one discussion written back in WilmerAI's current layout, so a user can
go back to WilmerAI (``omoide export wilmer DIR --discussion ID``):

- ``DIR/<id>/memories.json``: the discussion's chunk memories, oldest first, as WilmerAI's
  ``[{"text_block", "hash"}]`` (the hash: SHA-256 of the chunk's last message);
- ``DIR/<id>/chat_summary.json``: ``[{"text_block": summary, "hash": last chunk's hash}]``
  when the discussion has a rolling summary;
- ``DIR/<id>/vector_memory.db``: its vector memories and tracker (``vectordb``) when it has
  either;
- ``DIR/<id>/condensation_tracker.json``: ``{"lastCondensationHash": hash}`` when an import
  brought WilmerAI's (without it WilmerAI's ``condenseMemories`` would condense the condensed
  memories again);
- ``DIR/<id>/timestamps.json``: ``{message hash: "(Weekday, YYYY-MM-DD HH:MM:SS)"}`` as an
  import brought it (WilmerAI prefixes each message it knows with its time; without the file
  it would date the whole history anew, as said at the next request).

Files are plain JSON (no WilmerAI encryption), indented as WilmerAI writes them. Existing
files are never overwritten (``Conflict``). ``import_wilmer`` of the result brings back the
same chunks, summary, vector memories and tracker.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from omoide.chunking import chunk_messages
from omoide.compat.wilmer.formats import (
    CONDENSATION_KEY,
    TIMESTAMPS_KEY,
    TRACKER_KEY,
    iso,
    wilmer_hash,
    wilmer_metadata,
)
from omoide.compat.wilmer.vectordb import VectorRow, write_vector_db
from omoide.errors import Conflict, InvalidInput
from omoide.memory import Memory
from omoide.types import DEFAULT_ID, MemoryItem, MemoryType

_UNSAFE = ("/", "\\", ":", "\x00")


class WilmerExportResult(BaseModel):
    discussion_id: str
    folder: str
    files: list[str] = Field(default_factory=list)
    chunks: int = 0
    summary: bool = False
    vector_memories: int = 0
    tracker: bool = False
    condensation: bool = False
    timestamps: bool = False


class WilmerExporter:
    def __init__(self, memory: Memory) -> None:
        self._memory = memory

    def export_wilmer(
        self,
        directory: str | Path,
        discussion_id: str,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
    ) -> WilmerExportResult:
        """Write the discussion under ``directory`` (WilmerAI's ``DiscussionIds`` folder).

        >>> m.export_wilmer("~/WilmerAI/Public/DiscussionIds", "disc-1", user_id="alice")
        """
        if any(c in discussion_id for c in _UNSAFE) or discussion_id in ("", ".", ".."):
            raise InvalidInput(f"discussion id {discussion_id!r} is not a safe folder name")
        owner = (user_id, scope_id)
        session = self._memory.get_session(discussion_id, user_id=user_id, scope_id=scope_id)
        folder = Path(directory).expanduser() / discussion_id
        chunks = self._list(discussion_id, MemoryType.CHUNK, owner)
        summaries = self._list(discussion_id, MemoryType.SUMMARY, owner)
        vectors = [
            v
            for v in self._list(discussion_id, MemoryType.SEMANTIC, owner)
            if v.metadata.get("wilmer") == "vector"
        ]
        tracker = session.metadata.get(TRACKER_KEY)
        condensed = session.metadata.get(CONDENSATION_KEY)
        condensation = folder / "condensation_tracker.json"
        said = session.metadata.get(TIMESTAMPS_KEY)
        said = said if isinstance(said, dict) and said else None
        timestamps = folder / "timestamps.json"
        targets = [folder / "memories.json"]
        targets += [folder / "chat_summary.json"] if summaries else []
        targets += [folder / "vector_memory.db"] if vectors or tracker else []
        every = targets + ([condensation] if condensed else []) + ([timestamps] if said else [])
        taken = [str(t) for t in every if t.exists() or t.is_symlink()]
        if taken:
            raise Conflict(f"not overwriting {', '.join(taken)}")
        folder.mkdir(parents=True, exist_ok=True)
        result = WilmerExportResult(discussion_id=discussion_id, folder=str(folder))
        wilmer = self._wilmer_hashes(discussion_id, owner)
        _write_json(targets[0], [_chunk_record(c, wilmer) for c in chunks])
        result.chunks = len(chunks)
        if summaries:
            _write_json(targets[1], [_summary_record(summaries[-1], wilmer)])
            result.summary = True
        if vectors or tracker:
            rows = [_vector_row(v) for v in vectors]
            mark = _tracker(tracker)
            write_vector_db(targets[-1], discussion_id, rows, mark)
            result.vector_memories, result.tracker = len(rows), mark is not None
        if condensed:
            condensation.write_text(
                json.dumps({"lastCondensationHash": str(condensed)}, indent=4), encoding="utf-8"
            )
            result.condensation = True
        if said:
            timestamps.write_text(json.dumps(said, indent=4), encoding="utf-8")
            result.timestamps = True
        result.files = [str(t) for t in every]
        return result

    def _wilmer_hashes(self, discussion_id: str, owner: tuple[str, str]) -> dict[str, str]:
        """WilmerAI's hash of each stored message, by omoide's ledger hash: chunks omoide's
        own chunk job made end at a ledger hash, which WilmerAI cannot match to a message."""
        user_id, scope_id = owner
        messages = self._memory.session_messages(discussion_id, user_id=user_id, scope_id=scope_id)
        return {m.hash: wilmer_hash(m.content) for m in chunk_messages(messages)}

    def _list(
        self, discussion_id: str, type_: MemoryType, owner: tuple[str, str]
    ) -> list[MemoryItem]:
        """The discussion's valid memories of a type, oldest first."""
        user_id, scope_id = owner
        items = self._memory.session_memories(
            discussion_id, user_id=user_id, scope_id=scope_id, types=[type_]
        )
        oldest_first = items[::-1]  # the store lists newest first; sorted() keeps ties' order
        return sorted(oldest_first, key=lambda i: i.created_at)


def _write_json(path: Path, data: list[dict[str, Any]]) -> None:
    path.write_text(json.dumps(data, indent=4), encoding="utf-8")


def _chunk_record(item: MemoryItem, wilmer: dict[str, str]) -> dict[str, Any]:
    digest = item.metadata.get("wilmer_hash") or item.metadata.get("chunk_hash")
    digest = wilmer.get(str(digest), digest) if digest else wilmer_hash(item.text)
    return {"text_block": item.text, "hash": str(digest)}


def _summary_record(item: MemoryItem, wilmer: dict[str, str]) -> dict[str, Any]:
    digest = str(item.metadata.get("last_chunk_hash") or "")
    return {"text_block": item.text, "hash": wilmer.get(digest, digest)}


def _vector_row(item: MemoryItem) -> VectorRow:
    return VectorRow(item.text, wilmer_metadata(item.metadata), iso(item.created_at))


def _tracker(tracker: Any) -> tuple[str, str] | None:
    if not isinstance(tracker, dict):
        return None
    digest = tracker.get("wilmer_hash") or tracker.get("hash")
    return (str(digest), iso(datetime.now(UTC))) if digest else None
