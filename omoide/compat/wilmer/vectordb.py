"""WilmerAI's per-discussion vector memory database (``vector_memory.db``), read and written
in WilmerAI's schema (facts from its ``vector_db_utils``; no WilmerAI code is used):

- ``memories(id, discussion_id, memory_text, date_added, metadata_json)``: ``memory_text``
  is the memory, ``date_added`` ISO 8601 (UTC), ``metadata_json`` the object with ``title``,
  ``summary``, ``entities``, ``key_phrases``;
- ``memories_fts`` (FTS5, porter): ``title, summary, entities, key_phrases,
  memory_text_unweighted``, rowid = ``memories.id``; lists joined by spaces, quotes removed;
- ``vector_memory_hash_log(id, discussion_id, message_hash, timestamp)``: the hash of the
  last message processed, the newest ``timestamp`` being the current one;
- ``memory_embeddings(memory_id, model, dim, vector)``: created empty (omoide's vectors are
  its own model's, so none are written).

The seed's ``vector_memory_tracker`` table is read too.
"""

from __future__ import annotations

import json
import sqlite3  # WilmerAI's own database files, never omoide's store
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omoide.compat.wilmer.layout import WilmerFileError, check_storable, loads


@dataclass
class VectorRow:
    text: str
    metadata: dict[str, Any]
    date_added: str | None


def read_vector_db(path: Path) -> tuple[list[VectorRow], str | None]:
    """The rows of ``memories`` and the last hash of the tracker (``vector_memory_hash_log``,
    or the seed's ``vector_memory_tracker``)."""
    try:
        with closing(sqlite3.connect(f"file:{path.resolve()}?mode=ro", uri=True)) as conn:
            conn.row_factory = sqlite3.Row
            tables = {
                r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
            }
            rows = []
            if "memories" in tables:
                rows = [_vector_row(path, dict(r)) for r in conn.execute("SELECT * FROM memories")]
            return [r for r in rows if r.text], _tracker(conn, tables)
    except sqlite3.Error as exc:
        raise WilmerFileError(f"{path.name}: not a readable SQLite database ({exc})") from None


def _tracker(conn: sqlite3.Connection, tables: set[str]) -> str | None:
    if "vector_memory_hash_log" in tables:
        row = conn.execute(
            "SELECT message_hash FROM vector_memory_hash_log ORDER BY timestamp DESC, id DESC"
        ).fetchone()
        return str(row[0]) if row and row[0] else None
    if "vector_memory_tracker" in tables:
        tracker = None
        for row in conn.execute("SELECT * FROM vector_memory_tracker ORDER BY rowid"):
            hashes = [row[k] for k in row.keys() if "hash" in k.lower() and row[k]]  # noqa: SIM118
            tracker = str(hashes[0]) if hashes else tracker
        return tracker
    return None


def _vector_row(path: Path, row: dict[str, Any]) -> VectorRow:
    raw = row.get("metadata_json")
    try:
        metadata = loads(path, raw) if raw else {}
    except json.JSONDecodeError as exc:
        raise WilmerFileError(
            f"{path.name}: memory {row.get('id')} has metadata_json that is not JSON ({exc.msg})"
        ) from None
    if not isinstance(metadata, dict):
        raise WilmerFileError(f"{path.name}: memory {row.get('id')}: metadata_json not an object")
    date = next((row[k] for k in ("date_added", "created_at", "timestamp") if row.get(k)), None)
    text = str(row.get("memory_text") or "").strip()
    check_storable(
        path, f"memory {row.get('id')}", {"memory_text": text, "metadata_json": metadata}
    )
    return VectorRow(text, metadata, date)


_SCHEMA = """
CREATE TABLE memories (
    id INTEGER PRIMARY KEY, discussion_id TEXT NOT NULL, memory_text TEXT NOT NULL,
    date_added TEXT NOT NULL, metadata_json TEXT
);
CREATE VIRTUAL TABLE memories_fts USING fts5(
    title, summary, entities, key_phrases, memory_text_unweighted, tokenize='porter'
);
CREATE TABLE vector_memory_hash_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT, discussion_id TEXT NOT NULL,
    message_hash TEXT NOT NULL, timestamp DATETIME NOT NULL
);
CREATE TABLE memory_embeddings (
    memory_id INTEGER NOT NULL, model TEXT NOT NULL, dim INTEGER NOT NULL,
    vector BLOB NOT NULL, PRIMARY KEY (memory_id, model)
);
"""


def _fts(value: Any) -> str:
    if isinstance(value, list):
        return " ".join(str(v).replace('"', "") for v in value)
    return str(value) if value else ""


def write_vector_db(
    path: Path,
    discussion_id: str,
    rows: list[VectorRow],
    tracker: tuple[str, str] | None,
) -> None:
    """A new WilmerAI vector database at ``path`` with ``rows`` and, given ``(hash, iso
    time)``, the tracker. ``path`` must not exist."""
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.executescript(_SCHEMA)
        for row in rows:
            meta = row.metadata
            cursor = conn.execute(
                "INSERT INTO memories (discussion_id, memory_text, date_added, metadata_json)"
                " VALUES (?, ?, ?, ?)",
                (discussion_id, row.text, row.date_added, json.dumps(meta, ensure_ascii=False)),
            )
            conn.execute(
                "INSERT INTO memories_fts (rowid, title, summary, entities, key_phrases,"
                " memory_text_unweighted) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    cursor.lastrowid,
                    _fts(meta.get("title")),
                    _fts(meta.get("summary")),
                    _fts(meta.get("entities")),
                    _fts(meta.get("key_phrases")),
                    row.text,
                ),
            )
        if tracker is not None:
            conn.execute(
                "INSERT INTO vector_memory_hash_log (discussion_id, message_hash, timestamp)"
                " VALUES (?, ?, ?)",
                (discussion_id, *tracker),
            )
