"""``WilmerImporter``: a WilmerAI discussion directory imported as omoide memories.

Idempotent: chunks are known by hash, vector memories by a hash of their row, the summary by
its text (see ``omoide.compat.wilmer.formats``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from omoide.compat.wilmer.formats import (
    TRACKER_KEY,
    Progress,
    WilmerImportResult,
    discover,
    read_records,
    read_vector_db,
    vector_memory,
    wilmer_hash,
)
from omoide.engine.embedding import Embedding, index
from omoide.store.protocol import ChunkCursor, NewChunk, NewMemory, SessionPatch, Store
from omoide.types import DEFAULT_ID, MemoryType, Scope, SearchFilters, now_ms

_LIST_ALL = 1_000_000


class WilmerImporter:
    """Imports WilmerAI discussion directories into one store (formats: ``formats``)."""

    def __init__(
        self, store: Store, embedding: Embedding, *, actor: str, max_text_chars: int
    ) -> None:
        self._store = store
        self._embedding = embedding
        self._actor = actor
        self._max_text_chars = max_text_chars

    def import_wilmer(
        self,
        path: str | Path,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        progress: Progress | None = None,
    ) -> WilmerImportResult:
        """Import a WilmerAI discussion directory (formats: ``omoide.compat.wilmer.formats``);
        ``progress(done, total)`` is called after each file. Idempotent.

            >>> m.import_wilmer("~/WilmerAI/Public/DiscussionIds", user_id="alice").chunks
            42
        """
        found = discover(Path(path).expanduser())
        scope = Scope(user_id=user_id, scope_id=scope_id)
        result = WilmerImportResult(discussions=sorted(found))
        total, done = sum(len(files) for files in found.values()), 0
        for discussion_id, files in sorted(found.items()):
            with self._store.transaction() as tx:
                tx.sessions.ensure_session(scope, discussion_id)
            steps = (
                ("memories", self._import_memories),
                ("vector", self._import_vector),
                ("summary", self._import_summary),
            )
            for kind, run in steps:
                if kind in files:
                    run(scope, discussion_id, files[kind], result)
                    done += 1
                    if progress is not None:
                        progress(done, total)
        return result

    def _existing(self, scope: Scope, discussion_id: str, type_: MemoryType, key: str) -> set[str]:
        filters = SearchFilters(session_id=discussion_id, types=[type_], include_invalid=True)
        items, _ = self._store.memories.list_memories(scope, filters, _LIST_ALL, 0)
        return {str(i.metadata[key]) for i in items if key in i.metadata}

    def _import_memories(
        self, scope: Scope, discussion_id: str, path: Path, result: WilmerImportResult
    ) -> None:
        known = self._existing(scope, discussion_id, MemoryType.CHUNK, "wilmer_hash")
        records = read_records(path)
        base = now_ms() - len(records)
        chunks = []
        for position, (text, digest) in enumerate(records):
            digest = digest or wilmer_hash(text)
            if digest in known:
                result.skipped += 1
                continue
            known.add(digest)
            memory = NewMemory(
                text=text[: self._max_text_chars],
                type=MemoryType.CHUNK,
                session_id=discussion_id,
                metadata={"chunk_hash": digest, "wilmer_hash": digest, "wilmer": "file"},
                created_at_ms=base + position,
            )
            cursor = ChunkCursor(digest, base + position, 0, position)
            chunks.append(NewChunk(memory, cursor, 0, 0))
        if not chunks:
            return
        vectors = self._embedding.try_embed([c.memory.text for c in chunks])
        with self._store.transaction() as tx:
            items = tx.ledger.record_chunks(scope, discussion_id, chunks, self._actor)
            index(tx, scope, [i.id for i in items], vectors)
        result.chunks += len(items)

    def _import_summary(
        self, scope: Scope, discussion_id: str, path: Path, result: WilmerImportResult
    ) -> None:
        records = read_records(path)
        if not records:
            return
        text, digest = records[-1]
        filters = SearchFilters(session_id=discussion_id, types=[MemoryType.SUMMARY])
        current, _ = self._store.memories.list_memories(scope, filters, 1, 0)
        if current and current[0].text == text[: self._max_text_chars]:
            result.skipped += 1
            return
        metadata: dict[str, Any] = {"summary_kind": "rolling", "wilmer": "summary"}
        if digest is not None:
            metadata["last_chunk_hash"] = digest
        new = NewMemory(
            text=text[: self._max_text_chars],
            type=MemoryType.SUMMARY,
            session_id=discussion_id,
            metadata=metadata,
        )
        vectors = self._embedding.try_embed([new.text])
        with self._store.transaction() as tx:
            if current:
                item = tx.memories.supersede_memory(
                    scope, current[0].id, new, now_ms(), self._actor
                )
            else:
                item = tx.memories.insert_memory(scope, new, self._actor)
            index(tx, scope, [item.id], vectors)
        result.summaries += 1

    def _import_vector(
        self, scope: Scope, discussion_id: str, path: Path, result: WilmerImportResult
    ) -> None:
        rows, tracker = read_vector_db(path)
        known = self._existing(scope, discussion_id, MemoryType.SEMANTIC, "wilmer_key")
        records = []
        for row in rows:
            if row["key"] in known:
                result.skipped += 1
                continue
            known.add(row["key"])
            obj = {"summary": row["text"], **row["metadata"]}
            new = vector_memory(discussion_id, obj, row["text"], None)
            new.text = row["text"][: self._max_text_chars]  # WilmerAI's memory_text is the truth
            new.metadata["wilmer_key"] = row["key"]
            new.created_at_ms = row["created_ms"]
            records.append(new)
        vectors = self._embedding.try_embed([r.text for r in records]) if records else None
        with self._store.transaction() as tx:
            items = [tx.memories.insert_memory(scope, r, self._actor) for r in records]
            index(tx, scope, [i.id for i in items], vectors)
            session = tx.sessions.ensure_session(scope, discussion_id)
            current = session.metadata.get(TRACKER_KEY)
            if tracker is not None and (current or {}).get("hash") != tracker:
                mark = {"hash": tracker, "key": [now_ms(), 0, 0]}
                tx.sessions.update_session(
                    scope,
                    discussion_id,
                    SessionPatch(metadata={**session.metadata, TRACKER_KEY: mark}),
                )
                result.trackers += 1
        result.vector_memories += len(records)
