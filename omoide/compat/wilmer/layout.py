"""Where WilmerAI keeps a discussion's files, and reading them (facts from WilmerAI's
``config_utils`` / ``file_utils`` / ``vector_db_utils``; no WilmerAI code is used).

Layouts ``discover(dir)`` recognises, in each of ``dir``, ``dir/DiscussionIds``, ``dir/Public``
and ``dir/Public/DiscussionIds``:

- current: ``<id>/memories.json``, ``<id>/chat_summary.json``, ``<id>/vector_memory.db``,
  ``<id>/condensation_tracker.json``, ``<id>/timestamps.json``, also one level down under a
  per-API-key folder (16 hex characters: ``<keyhash>/<id>/...``);
- legacy: ``<id>_memories.json``, ``<id>_chat_summary.json``, ``<id>_vector_memory.db``
  (WilmerAI's old ``Public/<id>_vector_memory.db``), ``<id>_condensation_tracker.json`` and
  ``<id>_timestamps.json``;
- the names some versions wrote: ``<id>_memories.jsonl``, ``<id>_summary.jsonl``.

When one discussion has a file of one kind in several layouts, the current layout wins (as in
WilmerAI, which reads the nested file when it exists), then legacy, then ``.jsonl``; the others
are reported as skipped. Nothing reached through a symlink that leaves ``dir`` is read.

The memory and summary files are JSON arrays of ``{"text_block", "hash"}`` records (``[text,
hash]`` pairs and JSON lines are read too); the summary is the first record's text with the
last record's hash. The condensation tracker is ``{"lastCondensationHash": hash}``: the last
memory WilmerAI's ``condenseMemories`` folded into a condensed one. The timestamps file is
``{message hash: "(Weekday, YYYY-MM-DD HH:MM:SS)"}``: when each message was said, by the
SHA-256 of its content, in the WilmerAI host's local time with no zone (it may also hold
WilmerAI's pending-reply placeholder key, kept as it is). An encrypted file
(WilmerAI's per-file ``encryption_key``: a Fernet token) is refused: decrypt it with WilmerAI
first (turn encryption off and let it rewrite the files).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from omoide.errors import InvalidInput
from omoide.validate import describe_location, find_invalid

Kind = Literal["memories", "summary", "vector", "condensation", "timestamps"]
Layout = Literal["current", "legacy", "jsonl"]
_KEY_FOLDER = re.compile(r"^[0-9a-f]{16}$")
_NESTED: dict[str, Kind] = {
    "memories.json": "memories",
    "chat_summary.json": "summary",
    "vector_memory.db": "vector",
    "condensation_tracker.json": "condensation",
    "timestamps.json": "timestamps",
}
_FLAT: list[tuple[str, Kind, Layout]] = [
    ("_memories.json", "memories", "legacy"),
    ("_chat_summary.json", "summary", "legacy"),
    ("_vector_memory.db", "vector", "legacy"),
    ("_condensation_tracker.json", "condensation", "legacy"),
    ("_timestamps.json", "timestamps", "legacy"),
    ("_memories.jsonl", "memories", "jsonl"),
    ("_summary.jsonl", "summary", "jsonl"),
]
_RANK: dict[Layout, int] = {"current": 0, "legacy": 1, "jsonl": 2}
_TEXT_KEYS = ("text_block", "text", "memory", "content", "summary")
_HASH_KEYS = ("hash", "last_hash", "message_hash")
_WILMER_TIME = "%A, %Y-%m-%d %H:%M:%S"  # inside parentheses, as WilmerAI writes it
_FERNET = re.compile(rb"^\s*gAAAAA[A-Za-z0-9_\-=]+\s*$")


class WilmerFileError(InvalidInput):
    """A WilmerAI file that cannot be imported: its name and the problem."""


@dataclass
class Found:
    path: Path
    layout: Layout


@dataclass
class Discussion:
    """One discussion's files: the ones to import, and the ones skipped (with why)."""

    id: str
    files: dict[Kind, Found] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    key_folder: str | None = None

    def offer(self, kind: Kind, found: Found, root: Path) -> None:
        current = self.files.get(kind)
        if current is None or _RANK[found.layout] < _RANK[current.layout]:
            if current is not None:
                self.skipped.append(f"{rel(current.path, root)}: a {found.layout} file wins")
            self.files[kind] = found
        else:
            self.skipped.append(f"{rel(found.path, root)}: a {current.layout} file wins")


def rel(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def _inside(path: Path, root: Path) -> bool:
    """Whether ``path`` stays under ``root``; a symlink loop (which ``resolve`` raises on)
    does not."""
    try:
        return path.resolve().is_relative_to(root)
    except (RuntimeError, OSError):
        return False


def discover(directory: Path) -> tuple[dict[str, Discussion], list[str]]:
    """The discussions under ``directory`` and what was ignored (symlinks leaving it)."""
    if not directory.is_dir():
        raise InvalidInput(f"{directory} is not a directory")
    root = directory.resolve()
    found: dict[str, Discussion] = {}
    ignored: list[str] = []
    bases = [root, root / "DiscussionIds", root / "Public", root / "Public" / "DiscussionIds"]
    for base in bases:
        if base.is_dir() and _inside(base, root):
            _scan(base, root, found, ignored, None)
    return found, ignored


def _scan(
    base: Path,
    root: Path,
    found: dict[str, Discussion],
    ignored: list[str],
    key_folder: str | None,
) -> None:
    for path in sorted(base.iterdir()):
        if not _inside(path, root):
            ignored.append(
                f"{rel(path, root)}: a symlink leaving the directory (or a loop), not followed"
            )
            continue
        if path.is_dir():
            _scan_folder(path, root, found, ignored, key_folder)
            continue
        for suffix, kind, layout in _FLAT:
            if path.is_file() and path.name.endswith(suffix) and len(path.name) > len(suffix):
                _get(found, path.name[: -len(suffix)], key_folder).offer(
                    kind, Found(path, layout), root
                )


def _scan_folder(
    folder: Path,
    root: Path,
    found: dict[str, Discussion],
    ignored: list[str],
    key_folder: str | None,
) -> None:
    for name, kind in _NESTED.items():
        path = folder / name
        if not path.exists() and not path.is_symlink():
            continue
        if not _inside(path, root):
            ignored.append(
                f"{rel(path, root)}: a symlink leaving the directory (or a loop), not followed"
            )
        elif path.is_file():
            _get(found, folder.name, key_folder).offer(kind, Found(path, "current"), root)
    if key_folder is None and _KEY_FOLDER.match(folder.name):
        _scan(folder, root, found, ignored, folder.name)


def _get(found: dict[str, Discussion], discussion_id: str, key_folder: str | None) -> Discussion:
    return found.setdefault(discussion_id, Discussion(discussion_id, key_folder=key_folder))


# reading ---------------------------------------------------------------------------------
def _text(path: Path) -> str:
    """A file's text, stripped; an unreadable, encrypted or non-UTF-8 file is refused."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise WilmerFileError(f"{path.name}: cannot be read ({exc.strerror or exc})") from None
    if _FERNET.match(raw):
        raise WilmerFileError(
            f"{path.name}: encrypted by WilmerAI (a Fernet token); omoide does not decrypt "
            "WilmerAI files: turn WilmerAI's encryption off so it rewrites them in plain JSON"
        )
    try:
        return raw.decode("utf-8").strip()
    except UnicodeDecodeError as exc:
        raise WilmerFileError(f"{path.name}: not UTF-8 text ({exc.reason})") from None


def loads(path: Path, text: str) -> Any:
    """``json.loads``, with JSON nested past the parser (a ``RecursionError``, a traceback
    before) refused as a ``WilmerFileError`` naming the file."""
    try:
        return json.loads(text)
    except RecursionError:
        raise WilmerFileError(f"{path.name}: JSON nested too deeply") from None


def check_storable(path: Path, what: str, value: Any) -> None:
    """Refuse what no request could store: NUL, a lone surrogate, a number outside SQLite's
    or not finite, nesting deeper than a request's. Imported as it was, a NaN or a deep
    metadata value made every later search or listing of the tenant a 500."""
    found = find_invalid(value)
    if found is not None:
        where, problem = found
        raise WilmerFileError(f"{path.name}: {what}: {describe_location('', where)}: {problem}")


def read_records(path: Path) -> list[tuple[str, str | None]]:
    """``(text, hash)`` records of a memory or summary file, in file order."""
    text = _text(path)
    if not text:
        return []
    try:
        values = loads(path, text)
        values = values if isinstance(values, list) else [values]
    except json.JSONDecodeError as exc:
        values = _json_lines(path, text, exc)
    if values and len(values) == 2 and all(isinstance(v, str) for v in values):
        values = [values]  # one bare [text, hash] pair
    return [r for r in (_record(path, n, v) for n, v in enumerate(values)) if r is not None]


def _json_object(path: Path, shape: str) -> dict[str, Any]:
    """A small file holding one JSON object (``{}`` when empty); ``shape`` names it in the
    error when it holds something else."""
    text = _text(path)
    try:
        value = loads(path, text) if text else {}
    except json.JSONDecodeError as exc:
        raise WilmerFileError(f"{path.name}: not JSON ({exc.msg}, line {exc.lineno})") from None
    if not isinstance(value, dict):
        raise WilmerFileError(f"{path.name}: not a {shape} object")
    return value


def read_condensation_hash(path: Path) -> str | None:
    """The ``lastCondensationHash`` of a condensation tracker (None in an empty one)."""
    value = _json_object(path, '{"lastCondensationHash": ...}')
    digest = value.get("lastCondensationHash")
    if digest is not None and not isinstance(digest, str):
        raise WilmerFileError(f"{path.name}: lastCondensationHash is not a string")
    check_storable(path, "condensation tracker", {"lastCondensationHash": digest})
    return digest or None


def read_timestamps(path: Path) -> dict[str, str]:
    """A timestamps file's ``{message hash: time}`` entries (none in an empty file)."""
    value = _json_object(path, '{"<message hash>": "<time>"}')
    check_storable(path, "timestamps", value)
    for number, (key, when) in enumerate(value.items(), 1):
        if not isinstance(when, str):
            raise WilmerFileError(f"{path.name}: entry {number} ({key[:16]}): not a string")
    return value


def wilmer_time(value: str) -> int | None:
    """A WilmerAI timestamp, ``(Monday, 2025-08-04 18:30:00)``, in milliseconds since the epoch,
    read in this host's local time (None when it is not one: WilmerAI skips those too). A
    time this host cannot place (year 1: "year 0 is out of range", a traceback out of the
    import) or not after the epoch (a creation time of 0 is "now" to the store) is none."""
    try:
        ms = int(datetime.strptime(value.strip("() "), _WILMER_TIME).timestamp() * 1000)
    except (ValueError, OverflowError, OSError):
        return None
    return ms if ms > 0 else None


def _json_lines(path: Path, text: str, first: json.JSONDecodeError) -> list[Any]:
    values = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            values.append(loads(path, line))
        except json.JSONDecodeError:
            raise WilmerFileError(
                f"{path.name}: not JSON (line {first.lineno}, column {first.colno}: {first.msg})"
                f" nor JSON lines (line {number})"
            ) from None
    return values


def _record(path: Path, number: int, value: Any) -> tuple[str, str | None] | None:
    if isinstance(value, list | tuple) and value:
        text, digest = value[0], value[1] if len(value) > 1 else None
    elif isinstance(value, dict):
        text = next((value[k] for k in _TEXT_KEYS if value.get(k)), None)
        digest = next((value[k] for k in _HASH_KEYS if value.get(k)), None)
    elif isinstance(value, str):
        text, digest = value, None
    else:
        raise WilmerFileError(f"{path.name}: record {number + 1} is not a [text, hash] record")
    if text is None or (isinstance(text, str) and not text.strip()):
        return None
    if not isinstance(text, str):
        raise WilmerFileError(f"{path.name}: record {number + 1} has a text that is not a string")
    digest = str(digest) if digest is not None else None
    check_storable(path, f"record {number + 1}", {"text": text, "hash": digest})
    return text, digest
