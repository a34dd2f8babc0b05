"""``WilmerImporter``: WilmerAI discussions (layouts: ``omoide.compat.wilmer.layout``) imported
as omoide memories of session ``<discussionId>``.

Per discussion, in one transaction: the chunks (``chunk`` memories, in file order, each in the
chunk ledger with its WilmerAI hash), the summary (the rolling ``summary`` memory, its hash the
last chunk it covers), the vector memories (``semantic`` memories with WilmerAI's metadata) and
the vector tracker, WilmerAI's condensation tracker and its timestamps file (session metadata,
written back by the exporter; entries merged into what an earlier import stored). A chunk takes
the time WilmerAI recorded for its last message as its creation time only when that is
unambiguous: every new chunk's hash has a time and is in the memory file once, and the times
rise in file order after the discussion's newest chunk (else none is dated, so their order,
which WilmerAI's memory file relies on, is kept). WilmerAI writes its host's local time without
a zone; it is read in the importing host's. A file that cannot be read fails its discussion
only, naming the file and the problem; nothing of that discussion is written. Idempotent:
chunks are known by hash and text (counted: WilmerAI's hash is its last message's, so two
chunks ending in the same reply, "ok", share it and both are kept), vector memories by their
text and metadata, the summary by its text, timestamps by their entries.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from omoide.compat.wilmer.formats import (
    CONDENSATION_KEY,
    TIMESTAMPS_KEY,
    TRACKER_KEY,
    Progress,
    ledger_hash,
    to_ms,
    vector_key,
    vector_memory,
    wilmer_hash,
)
from omoide.compat.wilmer.layout import (
    Discussion,
    discover,
    read_condensation_hash,
    read_records,
    read_timestamps,
    rel,
    wilmer_time,
)
from omoide.compat.wilmer.vectordb import read_vector_db
from omoide.errors import InvalidInput, OmoideError
from omoide.memory import Memory
from omoide.types import (
    DEFAULT_ID,
    ChunkCursor,
    MemoryItem,
    MemoryType,
    NewChunk,
    NewMemory,
    Scope,
    now_ms,
)


class DiscussionReport(BaseModel):
    """What importing one discussion did."""

    discussion_id: str
    key_folder: str | None = Field(None, description="WilmerAI's per-API-key folder, if any.")
    files: dict[str, str] = Field(default_factory=dict, description="kind -> file read")
    chunks: int = 0
    summary: bool = False
    vector_memories: int = 0
    tracker: bool = False
    condensation: bool = Field(
        False, description="WilmerAI's condensation tracker (its last condensed memory) stored."
    )
    timestamps: bool = Field(
        False, description="WilmerAI's message timestamps stored (new entries in them)."
    )
    dated: int = Field(0, description="Chunks given the time WilmerAI recorded for them.")
    already: int = Field(0, description="Records imported before (skipped).")
    skipped: list[str] = Field(default_factory=list, description="Files not read, and why.")
    error: str | None = Field(None, description="Why nothing of it was imported.")


class WilmerImportResult(BaseModel):
    discussions: list[DiscussionReport]
    ignored: list[str] = Field(default_factory=list, description="Paths not read, and why.")
    chunks: int = 0
    summaries: int = 0
    vector_memories: int = 0
    trackers: int = 0
    skipped: int = Field(0, description="Records imported before.")
    failed: int = Field(0, description="Discussions not imported (see their error).")


@dataclass
class _Plan:
    chunks: list[NewChunk] = field(default_factory=list)
    summary: NewMemory | None = None
    vectors: list[NewMemory] = field(default_factory=list)
    tracker: str | None = None
    condensation: str | None = None
    timestamps: dict[str, str] | None = None


class WilmerImporter:
    """Imports WilmerAI discussion directories into one ``Memory``."""

    def __init__(self, memory: Memory) -> None:
        self._memory = memory
        self._max_text_chars = memory.max_text_chars

    def import_wilmer(
        self,
        path: str | Path,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        progress: Progress | None = None,
    ) -> WilmerImportResult:
        """Import every discussion found under ``path``; ``progress(done, total)`` after each.
        ``InvalidInput`` when ``path`` holds no recognisable discussion.

            >>> m.import_wilmer("~/WilmerAI/Public/DiscussionIds", user_id="alice").chunks
            42
        """
        root = Path(path).expanduser()
        found, ignored = discover(root)
        if not found:
            raise InvalidInput(
                f"{root}: no WilmerAI discussion found (looked for <id>/memories.json, "
                "<id>/chat_summary.json, <id>/vector_memory.db, <id>_memories.json, "
                "<id>_chat_summary.json, <id>_vector_memory.db, <id>_memories.jsonl, "
                "<id>_summary.jsonl)"
            )
        scope = Scope(user_id=user_id, scope_id=scope_id)
        result = WilmerImportResult(discussions=[], ignored=ignored)
        for done, discussion_id in enumerate(sorted(found), 1):
            report = self._discussion(scope, found[discussion_id], root.resolve())
            result.discussions.append(report)
            _add(result, report)
            if progress is not None:
                progress(done, len(found))
        return result

    def _discussion(self, scope: Scope, discussion: Discussion, root: Path) -> DiscussionReport:
        report = DiscussionReport(
            discussion_id=discussion.id,
            key_folder=discussion.key_folder,
            files={k: rel(f.path, root) for k, f in discussion.files.items()},
            skipped=list(discussion.skipped),
        )
        try:
            plan = self._plan(scope, discussion, report)
            self._write(scope, discussion.id, plan, report)
        except OmoideError as exc:
            report.error = exc.message
            report.chunks, report.vector_memories, report.dated = 0, 0, 0
            report.summary = report.tracker = report.condensation = report.timestamps = False
        return report

    def _plan(self, scope: Scope, discussion: Discussion, report: DiscussionReport) -> _Plan:
        """Read every file first: a bad one fails the discussion before anything is written."""
        plan = _Plan()
        files = discussion.files
        if "timestamps" in files:
            plan.timestamps = read_timestamps(files["timestamps"].path)
        if "memories" in files:
            path = files["memories"].path
            plan.chunks = self._chunks(scope, discussion.id, path, plan.timestamps, report)
        if "summary" in files:
            self._summary(scope, discussion.id, files["summary"].path, plan, report)
        if "vector" in files:
            self._vectors(scope, discussion.id, files["vector"].path, plan, report)
        if "condensation" in files:
            plan.condensation = read_condensation_hash(files["condensation"].path)
        return plan

    def _stored(self, scope: Scope, discussion_id: str, type_: MemoryType) -> list[MemoryItem]:
        """The discussion's memories of ``type_``, superseded ones too; none if it has none."""
        try:
            return self._memory.session_memories(
                discussion_id,
                user_id=scope.user_id,
                scope_id=scope.scope_id,
                types=[type_],
                include_invalid=True,
            )
        except OmoideError:
            return []

    def _existing(self, scope: Scope, discussion_id: str, type_: MemoryType, key: str) -> set[str]:
        items = self._stored(scope, discussion_id, type_)
        return {str(i.metadata[key]) for i in items if key in i.metadata}

    def _stored_chunks(
        self, scope: Scope, discussion_id: str
    ) -> tuple[Counter[tuple[str, str]], int | None]:
        """How many chunks of each (WilmerAI hash, text) the discussion already holds, and
        when its newest chunk was made."""
        items = self._stored(scope, discussion_id, MemoryType.CHUNK)
        known = Counter(
            (str(i.metadata["wilmer_hash"]), i.text) for i in items if "wilmer_hash" in i.metadata
        )
        newest = max((int(i.created_at.timestamp() * 1000) for i in items), default=None)
        return known, newest

    def _chunks(
        self,
        scope: Scope,
        discussion_id: str,
        path: Path,
        timestamps: dict[str, str] | None,
        report: DiscussionReport,
    ) -> list[NewChunk]:
        records = read_records(path)
        known, newest = self._stored_chunks(scope, discussion_id)
        ledgered = Counter(digest for digest, _ in known.elements())
        base = now_ms() - len(records)
        chunks = []
        for position, (text, digest) in enumerate(records):
            digest = digest or wilmer_hash(text)
            text = text[: self._max_text_chars]
            if known[(digest, text)] > 0:
                known[(digest, text)] -= 1
                report.already += 1
                continue
            memory = NewMemory(
                text=text,
                type=MemoryType.CHUNK,
                session_id=discussion_id,
                metadata={"chunk_hash": digest, "wilmer_hash": digest, "wilmer": "file"},
                created_at_ms=base + position,
            )
            cursor = ChunkCursor(
                ledger_hash(digest, ledgered[digest]), base + position, 0, position
            )
            ledgered[digest] += 1
            chunks.append(NewChunk(memory, cursor, 0, 0))
        report.dated = _date_chunks(chunks, records, timestamps or {}, newest)
        return chunks

    def _summary(
        self, scope: Scope, discussion_id: str, path: Path, plan: _Plan, report: DiscussionReport
    ) -> None:
        records = read_records(path)
        if not records:
            report.skipped.append(f"{path.name}: no summary in it")
            return
        # WilmerAI reads the first record's text as the current summary, and the last record's
        # hash as the chunk it covers up to
        text, digest = records[0][0], records[-1][1]
        try:
            current = self._memory.session_memories(
                discussion_id,
                user_id=scope.user_id,
                scope_id=scope.scope_id,
                types=[MemoryType.SUMMARY],
                limit=1,
            )
        except OmoideError:
            current = []
        if current and current[0].text == text[: self._max_text_chars]:
            report.already += 1
            return
        metadata: dict[str, Any] = {"summary_kind": "rolling", "wilmer": "summary"}
        if digest is not None:
            metadata["last_chunk_hash"] = digest
        plan.summary = NewMemory(
            text=text[: self._max_text_chars],
            type=MemoryType.SUMMARY,
            session_id=discussion_id,
            metadata=metadata,
            supersedes=current[0].id if current else None,
        )

    def _vectors(
        self, scope: Scope, discussion_id: str, path: Path, plan: _Plan, report: DiscussionReport
    ) -> None:
        rows, plan.tracker = read_vector_db(path)
        known = self._existing(scope, discussion_id, MemoryType.SEMANTIC, "wilmer_key")
        for row in rows:
            key = vector_key(row.text, row.metadata)
            if key in known:
                report.already += 1
                continue
            known.add(key)
            obj = {"summary": row.text, **row.metadata}
            new = vector_memory(discussion_id, obj, row.text, None)
            new.text = row.text[: self._max_text_chars]  # WilmerAI's memory_text is the truth
            new.metadata["wilmer_key"] = key
            new.metadata["wilmer_metadata"] = row.metadata  # exported back as it was
            new.created_at_ms = to_ms(row.date_added)
            plan.vectors.append(new)

    def _write(
        self, scope: Scope, discussion_id: str, plan: _Plan, report: DiscussionReport
    ) -> None:
        def tracker(metadata: dict[str, Any]) -> dict[str, Any] | None:
            updated = dict(metadata)
            current = metadata.get(TRACKER_KEY)
            if plan.tracker is not None and (current or {}).get("wilmer_hash") != plan.tracker:
                mark = {"hash": plan.tracker, "key": [now_ms(), 0, 0], "wilmer_hash": plan.tracker}
                updated[TRACKER_KEY] = mark
                report.tracker = True
            if plan.timestamps:
                current = metadata.get(TIMESTAMPS_KEY)
                merged = {**(current if isinstance(current, dict) else {}), **plan.timestamps}
                if merged != current:
                    updated[TIMESTAMPS_KEY] = merged
                    report.timestamps = True
            if plan.condensation is not None and (
                metadata.get(CONDENSATION_KEY) != plan.condensation
            ):
                updated[CONDENSATION_KEY] = plan.condensation
                report.condensation = True
            return updated if updated != metadata else None

        self._memory.write_session(
            discussion_id,
            user_id=scope.user_id,
            scope_id=scope.scope_id,
            chunks=plan.chunks,  # marks the discussion chunked, even with none
            memories=plan.vectors,
            summary=plan.summary,
            update_metadata=tracker,
        )
        report.chunks, report.vector_memories = len(plan.chunks), len(plan.vectors)
        report.summary = plan.summary is not None


def _date_chunks(
    chunks: list[NewChunk],
    records: list[tuple[str, str | None]],
    timestamps: dict[str, str],
    newest: int | None,
) -> int:
    """Give each new chunk the time WilmerAI recorded for its last message, if all of them
    have one unambiguously (see the module's docstring); how many were dated."""
    if not chunks or not timestamps:
        return 0
    in_file = Counter(digest for _, digest in records)
    times: list[int] = []
    for chunk in chunks:
        digest = str(chunk.memory.metadata["wilmer_hash"])
        when = wilmer_time(timestamps.get(digest, ""))
        if when is None or in_file[digest] > 1:
            return 0
        times.append(when)
    floor = newest if newest is not None else times[0] - 1
    if any(later <= earlier for earlier, later in zip([floor, *times], times, strict=False)):
        return 0
    for chunk, ms in zip(chunks, times, strict=True):
        chunk.memory.created_at_ms = ms
    return len(chunks)


def _add(result: WilmerImportResult, report: DiscussionReport) -> None:
    result.chunks += report.chunks
    result.summaries += int(report.summary)
    result.vector_memories += report.vector_memories
    result.trackers += int(report.tracker)
    result.skipped += report.already
    result.failed += int(report.error is not None)
