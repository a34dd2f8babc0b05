"""WilmerAI's hashes, text forms and vector memory objects, shared by ``QualityMemory``, the
importer and the exporter (files and layouts: ``omoide.compat.wilmer.layout``).

- A chunk's hash is WilmerAI's: the SHA-256 of its last message's content (``wilmer_hash``),
  kept in the chunk memory's metadata as ``wilmer_hash`` (and ``chunk_hash``).
- A chunk's text, when no LLM summarised it, is WilmerAI's text block: the messages'
  contents joined by newlines, no roles (``text_block``).
- A vector memory is WilmerAI's object (``title``, ``summary``, ``entities``, ``key_phrases``;
  other keys kept in ``metadata["wilmer_extra"]``); its text is WilmerAI's ``memory_text``.
- The vector tracker (the last message vector memories cover) is in the session's metadata
  under ``wilmer_vector_tracker``: ``{"hash", "key", "wilmer_hash"}``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from omoide.chunking import ChunkMessage, Ledger
from omoide.types import MemoryType, NewMemory

Progress = Callable[[int, int], None]

TRACKER_KEY = "wilmer_vector_tracker"  # session metadata: the last message vector memory covered
# session metadata: the last memory WilmerAI's condenseMemories condensed (its hash)
CONDENSATION_KEY = "wilmer_condensation_hash"
# session metadata: WilmerAI's timestamps file as it was, {message hash: time}
TIMESTAMPS_KEY = "wilmer_timestamps"
VECTOR_KIND = "vector"  # metadata "wilmer" of a vector memory
_KNOWN = ("title", "summary", "entities", "key_phrases")


def wilmer_hash(content: str) -> str:
    """WilmerAI's message hash: SHA-256 of the message content."""
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def text_block(contents: Sequence[str]) -> str:
    """WilmerAI's text block of a chunk: its messages' contents joined by newlines."""
    return "\n".join(contents)


def vector_key(text: str, metadata: dict[str, Any]) -> str:
    """A vector memory's identity across imports and exports: its text and its WilmerAI
    metadata, canonically serialised (so ``import(export(x))`` finds ``x`` already there)."""
    canonical = json.dumps(metadata, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(f"{text}\x1f{canonical}".encode()).hexdigest()[:32]


def wilmer_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    """The WilmerAI ``metadata_json`` object of an omoide vector memory: the imported one
    as it was, else built from its fields."""
    original = metadata.get("wilmer_metadata")
    if isinstance(original, dict):
        return original
    extra = metadata.get("wilmer_extra")
    out = {k: metadata[k] for k in _KNOWN if k in metadata}
    return {**out, **(extra if isinstance(extra, dict) else {})}


def ledger_hash(digest: str, earlier: int) -> str:
    """The ledger key of an imported chunk: its WilmerAI hash, suffixed ``#n`` when ``n``
    earlier chunks of the discussion end with the same content (the ledger keys are unique,
    WilmerAI's hashes are not: two chunks may both end in "ok")."""
    return digest if earlier == 0 else f"{digest}#{earlier}"


def translate_ledger(messages: list[ChunkMessage], ledger: Ledger) -> Ledger:
    """An imported cursor holds a WilmerAI hash: place it on the message whose content hashes
    to it (the last such), so ``plan_chunks`` starts after it."""
    if ledger.last_hash is None or any(m.hash == ledger.last_hash for m in messages):
        return ledger
    digest = ledger.last_hash.split("#", 1)[0]
    for message in reversed(messages):
        if wilmer_hash(message.content) == digest:
            return Ledger(exists=ledger.exists, last_hash=message.hash, last_key=message.key)
    return ledger


def to_ms(value: Any) -> int | None:
    """A WilmerAI ``date_added`` (ISO 8601; naive means UTC) in unix milliseconds."""
    if isinstance(value, int | float):
        return int(value * 1000) if value < 1e11 else int(value)
    if isinstance(value, str) and value:
        try:
            when = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        when = when if when.tzinfo else when.replace(tzinfo=UTC)
        return int(when.timestamp() * 1000)
    return None


def iso(when: datetime) -> str:
    """A time as WilmerAI writes ``date_added``: ISO 8601 in UTC."""
    return when.astimezone(UTC).isoformat()


def vector_memory(
    discussion_id: str, obj: dict[str, Any], raw: str, last_hash: str | None
) -> NewMemory:
    """A WilmerAI vector memory object as an omoide memory: the text is its summary (as in
    WilmerAI's ``memory_text``); title, entities, key phrases and the raw chunk are indexed
    as its keyword context, and kept in its metadata."""
    title = str(obj.get("title") or "")
    summary = str(obj.get("summary") or raw)
    entities = _strings(obj.get("entities"))
    phrases = _strings(obj.get("key_phrases"))
    context = "\n".join([title, "; ".join(entities), "; ".join(phrases), raw])
    metadata: dict[str, Any] = {
        "wilmer": VECTOR_KIND,
        "title": title,
        "summary": summary,
        "entities": entities,
        "key_phrases": phrases,
    }
    extra = {k: v for k, v in obj.items() if k not in _KNOWN}
    if extra:
        metadata["wilmer_extra"] = extra
    if last_hash is not None:
        metadata["chunk_hash"] = last_hash
    return NewMemory(
        text=summary,
        type=MemoryType.SEMANTIC,
        session_id=discussion_id,
        context=context,
        metadata=metadata,
    )


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [p.strip() for p in value.split(",") if p.strip()]
    if isinstance(value, list):
        return [str(v) for v in value if v is not None and str(v).strip()]
    return []
