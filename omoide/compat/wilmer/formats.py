"""The WilmerAI memory formats, and what importing a WilmerAI discussion directory reads.

``import_wilmer(dir)`` reads, for each ``<discussionId>`` found at the top of ``dir``:

- ``<discussionId>_memories.jsonl``: the file memory chunks. A JSON array, or JSON lines, of
  records that are either ``[text_block, hash]`` pairs (WilmerAI's own form) or objects with
  the text under ``text_block``/``text``/``memory``/``content`` and the hash under
  ``hash``/``last_hash``/``message_hash``. They become ``chunk`` memories, in order, each
  recorded in the chunk ledger with its hash.
- ``<discussionId>_summary.jsonl``: the same record forms; the last record is the rolling
  summary (its hash links it to the last chunk it covers). It becomes a ``summary`` memory.
- ``<discussionId>_vector_memory.db``: SQLite; every row of ``memories`` (``memory_text`` and,
  optionally, ``metadata_json`` with title, summary, entities, key_phrases, and a date column
  ``date_added``/``created_at``/``timestamp``) becomes a ``semantic`` vector memory; the last
  hash of ``vector_memory_tracker`` becomes the discussion's vector tracker.

Everything goes to session ``<discussionId>``. A second import adds nothing: chunks are known
by hash, vector memories by a hash of their row, the summary by its text. WilmerAI hashes are
``sha256(message content)``, so a later ``quality_memory`` finds the imported cursor in the
resent conversation and does not reprocess what WilmerAI had already processed.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3  # reads WilmerAI's own database file, never omoide's store
from collections.abc import Callable
from contextlib import closing
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from omoide.engine.chunking import ChunkMessage, Ledger
from omoide.errors import InvalidInput
from omoide.store.protocol import NewMemory
from omoide.types import MemoryType

Progress = Callable[[int, int], None]

TRACKER_KEY = "wilmer_vector_tracker"  # session metadata: the last message vector memory covered
VECTOR_KIND = "vector"  # metadata "wilmer" of a vector memory
_TEXT_KEYS = ("text_block", "text", "memory", "content", "summary")
_HASH_KEYS = ("hash", "last_hash", "message_hash")
_DATE_KEYS = ("date_added", "created_at", "timestamp", "date")
_SUFFIXES = {"_memories.jsonl": "memories", "_summary.jsonl": "summary"}
_VECTOR_DB = "_vector_memory.db"


class WilmerImportResult(BaseModel):
    discussions: list[str]
    chunks: int = 0
    summaries: int = 0
    vector_memories: int = 0
    trackers: int = 0
    skipped: int = 0


def wilmer_hash(content: str) -> str:
    """WilmerAI's message hash: SHA-256 of the message content."""
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def translate_ledger(messages: list[ChunkMessage], ledger: Ledger) -> Ledger:
    """An imported cursor holds a WilmerAI hash: place it on the message whose content hashes
    to it (the last such), so ``plan_chunks`` starts after it."""
    if ledger.last_hash is None or any(m.hash == ledger.last_hash for m in messages):
        return ledger
    for message in reversed(messages):
        if wilmer_hash(message.content) == ledger.last_hash:
            return Ledger(exists=ledger.exists, last_hash=message.hash, last_key=message.key)
    return ledger


def read_records(path: Path) -> list[tuple[str, str | None]]:
    """``(text, hash)`` records of a WilmerAI ``.jsonl`` file (see the module doc)."""
    raw = path.read_text(encoding="utf-8").strip()
    if not raw:
        return []
    try:
        values = json.loads(raw)
        values = values if isinstance(values, list) else [values]
    except json.JSONDecodeError:
        try:
            values = [json.loads(line) for line in raw.splitlines() if line.strip()]
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"{path.name}: not JSON or JSON lines: {exc}") from exc
    if values and all(isinstance(v, str) for v in values) and len(values) == 2:
        values = [values]  # one bare [text, hash] pair
    return [r for r in map(_record, values) if r is not None]


def _record(value: Any) -> tuple[str, str | None] | None:
    if isinstance(value, list | tuple) and value:
        text, digest = value[0], value[1] if len(value) > 1 else None
    elif isinstance(value, dict):
        text = next((value[k] for k in _TEXT_KEYS if value.get(k)), None)
        digest = next((value[k] for k in _HASH_KEYS if value.get(k)), None)
    elif isinstance(value, str):
        text, digest = value, None
    else:
        return None
    if not isinstance(text, str) or not text.strip():
        return None
    return text, str(digest) if digest is not None else None


def read_vector_db(path: Path) -> tuple[list[dict[str, Any]], str | None]:
    """The rows of ``memories`` (``text``, ``metadata``, ``created_ms``) and the tracker hash."""
    uri = f"file:{path.resolve()}?mode=ro"
    with closing(sqlite3.connect(uri, uri=True)) as conn:
        conn.row_factory = sqlite3.Row
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        rows = []
        if "memories" in tables:
            rows = [_vector_row(dict(r)) for r in conn.execute("SELECT * FROM memories")]
        tracker = None
        if "vector_memory_tracker" in tables:
            for row in conn.execute("SELECT * FROM vector_memory_tracker ORDER BY rowid"):
                found = [row[k] for k in row.keys() if "hash" in k.lower() and row[k]]  # noqa: SIM118
                tracker = str(found[0]) if found else tracker
    return [r for r in rows if r["text"]], tracker


def _vector_row(row: dict[str, Any]) -> dict[str, Any]:
    try:
        metadata = json.loads(row.get("metadata_json") or "{}")
    except json.JSONDecodeError:
        metadata = {}
    created = next((row[k] for k in _DATE_KEYS if row.get(k) is not None), None)
    key = hashlib.sha256(f"{row.get('memory_text')}\x1f{row.get('metadata_json')}".encode())
    return {
        "text": str(row.get("memory_text") or "").strip(),
        "metadata": metadata if isinstance(metadata, dict) else {},
        "created_ms": _to_ms(created),
        "key": key.hexdigest()[:32],
    }


def _to_ms(value: Any) -> int | None:
    if isinstance(value, int | float):
        return int(value * 1000) if value < 1e11 else int(value)
    if isinstance(value, str) and value:
        try:
            return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000)
        except ValueError:
            return None
    return None


def discover(directory: Path) -> dict[str, dict[str, Path]]:
    """``{discussionId: {"memories"|"summary"|"vector": path}}`` of a WilmerAI directory."""
    if not directory.is_dir():
        raise InvalidInput(f"{directory} is not a directory")
    found: dict[str, dict[str, Path]] = {}
    for path in sorted(directory.iterdir()):
        suffixes = {**_SUFFIXES, _VECTOR_DB: "vector"}
        for suffix, kind in suffixes.items():
            if path.is_file() and path.name.endswith(suffix) and len(path.name) > len(suffix):
                found.setdefault(path.name[: -len(suffix)], {})[kind] = path
    return found


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
