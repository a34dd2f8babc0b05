"""``MarkdownMirror``: long-term memories as human-editable markdown (``INDEX_BACKEND=file``).

Layout: ``<root>/memories/{user_id}/{scope_id}/{type}.md``
(``user_profile.md``, ``semantic_memory.md``, ``episodic_memory.md``, ``summary.md``), one item
per memory (``omoide.engine.mirror.format``). The database stays the source of truth: a search
never reads a file. Edits to the files come back as ordinary writes through ``MemoryService``
(so with history): a changed item updates its memory, a removed one deletes it, a new one adds
one.

Several processes may share a data dir. Every sync of a tenant dir runs under its file lock
(``.omoide-mirror.lock``) and (1) reads each file; one whose hash differs from the hash last
mirrored (``.omoide-mirror.json``) holds an edit nobody ingested yet, and it is ingested
*first*, against the texts last mirrored (so an item nobody touched never reverts a newer
database write); (2) renders the files from the database and replaces each that changed
atomically (temp file, fsync, rename), unless the file changed again meanwhile (then it starts
over); (3) records the new hashes. A writer killed at any point leaves the old file or the new
one, both whole; the memories are in the database already.

What cannot be read (``Malformed``) or written (a text the service refuses) stays in the file,
under a marker, and is reported: logged, and listed by ``status()`` (``/health``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections.abc import Collection, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from omoide.engine.memories import MemoryService
from omoide.engine.mirror.files import (
    STATE,
    Files,
    atomic_write,
    being_written,
    load_state,
    read_bytes,
    read_files,
    remove_stale_temps,
    sha,
)
from omoide.engine.mirror.format import ID_COMMENT, Item, Malformed, item_markdown, parse, render
from omoide.engine.mirror.watch import FileWatcher
from omoide.errors import InvalidInput, NotFound, OmoideError
from omoide.store.ports.memories import MemoryReads
from omoide.store.protocol import NewMemory
from omoide.types import MemoryItem, MemoryType, Scope, SearchFilters

log = logging.getLogger("omoide.mirror")

# One file per long-term type, named after the type's wire name (``semantic_memory``, ...).
FILES: dict[MemoryType, str] = {
    MemoryType.USER_PROFILE: "user_profile.md",
    MemoryType.SEMANTIC: "semantic_memory.md",
    MemoryType.EPISODIC: "episodic_memory.md",
    MemoryType.SUMMARY: "summary.md",
}
LOCK = ".omoide-mirror.lock"
LOCK_TIMEOUT_S = 60.0
PAGE = 10_000
RETRIES = 5  # rewrites given up after the file changed under us this many times in a row


# A directory name's bytes at most (filesystems refuse names over 255): a longer escaped id
# keeps a readable head and ends in ``~`` and a digest of the id, and its tenant is named in
# ``TENANT`` (``~`` is escaped in every other name, so it marks these alone). Every name that
# fits keeps the folder earlier versions wrote: a lower bound moved the files of ids that
# mirrored fine, and their old folder, still edited, was read no more.
NAME_MAX_BYTES = 255
TENANT = ".omoide-tenant.json"


def dir_part(value: str) -> str:
    """An id as one safe directory name: letters and digits (any script) stay readable,
    anything else (``/``, ``.``, spaces) is %-escaped, so no id can leave the root."""
    keep = "-_@"
    name = "".join(
        ch if ch.isalnum() or ch in keep else "".join(f"%{b:02X}" for b in ch.encode())
        for ch in value
    )
    if len(name.encode()) <= NAME_MAX_BYTES:
        return name
    digest = "~" + hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:24]
    head = name.encode()[: NAME_MAX_BYTES - len(digest)].decode(errors="ignore")
    if "%" in head[-2:]:  # an escape cut in two
        head = head[: head.rindex("%")]
    return head + digest


def canonical(text: str) -> str:
    """A text as it reads back from its own item: what file and database texts are compared
    as (surrounding whitespace and line separators are not an edit)."""
    items = parse(item_markdown("x", text)).items
    return items[0].text if items else text.strip()


class MarkdownMirror:
    def __init__(
        self,
        memory_reads: MemoryReads,
        memories: MemoryService,
        root: Path,
        *,
        lock_timeout_s: float = LOCK_TIMEOUT_S,
    ) -> None:
        try:
            import filelock  # noqa: F401  (the files extra; checked here, used in _locked)
        except ImportError:
            raise InvalidInput(
                "INDEX_BACKEND=file needs the files extra: pip install 'omoide[files]'"
            ) from None
        self._memory_reads = memory_reads
        self._memories = memories
        self.root = root
        self._lock_timeout_s = lock_timeout_s
        self._ingesting = threading.local()
        self._problems: dict[str, list[dict[str, Any]]] = {}
        self._guard = threading.Lock()
        self._watcher = FileWatcher(root / "memories", self._changed)

    # the watcher -------------------------------------------------------------------------
    def start(self) -> bool:
        """Bring every tenant dir up to date, then watch the files (True), or not when
        watchdog is missing (the dirty check before each read remains)."""
        self.catch_up()
        return self._watcher.running or self._watcher.start()

    def catch_up(self) -> None:
        """Sync every tenant dir there is: edits made while no process watched, and writes
        whose mirroring was cut short (a killed process) or made by a process without it."""
        for user_dir in sorted((self.root / "memories").glob("*")):
            for where in sorted(user_dir.glob("*")):
                if where.is_dir() and (scope := self.scope_of(where / FILES[MemoryType.SEMANTIC])):
                    try:
                        self.sync(scope)
                    except (OSError, OmoideError, TimeoutError):
                        log.exception("markdown mirror: could not sync %s", where)

    def stop(self) -> None:
        self._watcher.stop()

    def _changed(self, path: Path) -> None:
        if path.name in FILES.values() and (scope := self.scope_of(path)) is not None:
            self.sync(scope, render_always=False)

    # where -------------------------------------------------------------------------------
    def tenant_dir(self, scope: Scope) -> Path:
        return self.root / "memories" / dir_part(scope.user_id) / dir_part(scope.scope_id)

    def scope_of(self, path: Path) -> Scope | None:
        """The tenant a file under the root belongs to (for the watcher), or None."""
        try:
            parts = path.resolve().relative_to((self.root / "memories").resolve()).parts
        except ValueError:
            return None
        if len(parts) < 2:
            return None
        if "~" in parts[0] or "~" in parts[1]:  # a long id: the folder says whose it is
            try:
                named = json.loads(
                    (self.root / "memories" / parts[0] / parts[1] / TENANT).read_text("utf-8")
                )
                return Scope(user_id=named["user_id"], scope_id=named["scope_id"])
            except (OSError, ValueError, KeyError, TypeError):
                return None
        return Scope(user_id=unquote(parts[0]), scope_id=unquote(parts[1]))

    # hooks -------------------------------------------------------------------------------
    def on_written(self, scope: Scope, types: Collection[MemoryType] | None) -> None:
        """After a committed write: mirror it (not the writes this mirror's ingest makes)."""
        if getattr(self._ingesting, "active", False):
            return
        if types is not None and not any(t in FILES for t in types):
            return
        try:
            self.sync(scope)
        except OSError as exc:  # e.g. a name too long for the filesystem; the database has it
            reason = f"the tenant's files could not be written: {exc.strerror or exc}"
            self._report(self.tenant_dir(scope), [{"file": "*", "reason": reason}])
            raise

    def before_read(self, scope: Scope) -> None:
        """The dirty check: an edit not ingested yet (its hash is not the mirrored one) is
        ingested before the search or listing runs."""
        if not getattr(self._ingesting, "active", False) and self.dirty(scope):
            self.sync(scope, render_always=False)

    def dirty(self, scope: Scope) -> bool:
        where = self.tenant_dir(scope)
        if not where.is_dir():
            return False
        hashes = load_state(where).get("files", {})
        for name in FILES.values():
            path = where / name
            seen = hashes.get(name, {}).get("sha256")
            if path.is_file() and sha(path.read_bytes()) != seen:
                return True
        return False

    # the sync ----------------------------------------------------------------------------
    def sync(self, scope: Scope, *, render_always: bool = True) -> None:
        """Ingest what was edited, then write the files the database now implies."""
        where = self.tenant_dir(scope)
        where.mkdir(parents=True, exist_ok=True)
        if "~" in where.name or "~" in where.parent.name:
            named = {"user_id": scope.user_id, "scope_id": scope.scope_id}
            if not (where / TENANT).is_file():
                atomic_write(where / TENANT, json.dumps(named).encode())
        with self._locked(where):
            remove_stale_temps(where)
            for _ in range(RETRIES):
                state = load_state(where)
                files = read_files(where, FILES)
                edited = [k for k in files.raw if sha(files.raw[k]) != _seen(state, k)]
                if not edited and not render_always:
                    return
                if any(being_written(where / FILES[k]) for k in edited):
                    # half a file: its writer's close (the watcher) or the next read's dirty
                    # check ingests it whole, and renders what the database gained meanwhile
                    return
                kept = self._ingest(scope, files, state, edited) if edited else {}
                if self._write(scope, where, files, state, kept):
                    return
            self._report(where, [{"file": "*", "reason": "kept changing during a rewrite"}])

    def _ingest(
        self, scope: Scope, files: Files, state: dict[str, Any], edited: list[MemoryType]
    ) -> dict[MemoryType, list[Malformed]]:
        """Apply the edits of the ``edited`` files; return per type the items that could not
        be applied (kept in the file, with the reason)."""
        snapshot: dict[str, str] = {}
        for name_state in state.get("files", {}).values():
            snapshot.update(name_state.get("memories", {}))
        parsed = {k: parse(t) for k, t in files.text.items() if t is not None}
        listed = {i.memory_id for p in parsed.values() for i in p.items if i.memory_id}
        kept_raw = "\n".join(b.raw for p in parsed.values() for b in p.malformed)
        mentioned = set(ID_COMMENT.findall(kept_raw))  # an id in a kept block is not deleted
        failed: dict[MemoryType, list[Malformed]] = {}
        self._ingesting.active = True
        try:
            for kind in edited:
                if kind not in parsed:
                    continue
                for item in parsed[kind].items:
                    if (error := self._apply(scope, kind, item, snapshot)) is not None:
                        failed.setdefault(kind, []).append(Malformed(item.raw, error, item.line))
                gone = set(_seen_memories(state, kind)) - listed - mentioned
                for memory_id in sorted(gone):
                    self._delete(scope, memory_id)
        finally:
            self._ingesting.active = False
        return failed

    def _apply(
        self, scope: Scope, kind: MemoryType, item: Item, snapshot: dict[str, str]
    ) -> str | None:
        """Ingest one item; the reason when it could not be."""
        user_id, scope_id = scope.user_id, scope.scope_id
        try:
            if item.memory_id is None:
                self._add(scope, kind, item.text)
                return None
            if snapshot.get(item.memory_id) == item.text:
                return None
            current = _valid(self._memory_reads.get_memories(scope, [item.memory_id]))
            if current is None:  # unknown here, or deleted meanwhile: the words are kept
                self._add(scope, kind, item.text)
            elif canonical(current.text) != item.text:
                self._memories.update(item.memory_id, item.text, user_id=user_id, scope_id=scope_id)
            return None
        except OmoideError as exc:
            log.warning("markdown mirror: %s (%s line %d)", exc, FILES[kind], item.line)
            return f"not applied: {exc}"

    def _add(self, scope: Scope, kind: MemoryType, text: str) -> None:
        self._memories.add_many(
            [NewMemory(text=text, type=kind)], user_id=scope.user_id, scope_id=scope.scope_id
        )

    def _delete(self, scope: Scope, memory_id: str) -> None:
        with suppress(NotFound):  # deleted through the API meanwhile
            self._memories.delete(memory_id, user_id=scope.user_id, scope_id=scope.scope_id)

    def _write(
        self,
        scope: Scope,
        where: Path,
        files: Files,
        state: dict[str, Any],
        failed: dict[MemoryType, list[Malformed]],
    ) -> bool:
        """Render every file from the database; False if one changed since it was read."""
        out: dict[str, Any] = {"version": 1, "files": {}}
        problems: list[dict[str, Any]] = []
        for kind, name in FILES.items():
            text = files.text.get(kind, "")
            if text is None:  # not UTF-8: left alone (and not updated) until it is fixed
                problems.append({"file": name, "line": 0, "reason": "the file is not UTF-8"})
                out["files"][name] = state.get("files", {}).get(name, {})
                continue
            content, texts, kept = self._render(scope, kind, text, failed.get(kind, []), state)
            problems += [{"file": name, "line": b.line, "reason": b.reason} for b in kept]
            path = where / name
            if content != files.raw.get(kind) and (texts or kept or path.exists()):
                if read_bytes(path) != files.raw.get(kind):
                    return False  # edited while we rendered: ingest that first
                atomic_write(path, content)
            disk = content if path.exists() else b""
            out["files"][name] = {"sha256": sha(disk) if disk else None, "memories": texts}
        out["problems"] = problems
        atomic_write(where / STATE, json.dumps(out, ensure_ascii=False).encode())
        self._report(where, problems)
        return True

    def _render(
        self,
        scope: Scope,
        kind: MemoryType,
        text: str,
        failed: list[Malformed],
        state: dict[str, Any],
    ) -> tuple[bytes, dict[str, str], list[Malformed]]:
        """The file's new content, the texts it mirrors by id, and the blocks it keeps.

        A memory whose id is in a kept block is not written a second time: the block stands
        for it until it is fixed (and keeps its last mirrored text, so the fix reads as the
        edit it is)."""
        parsed = parse(text)
        kept = parsed.malformed + failed
        held = set(ID_COMMENT.findall("\n".join(b.raw for b in kept)))
        memories = self._current(scope, kind, [i.memory_id for i in parsed.items])
        shown = [(m.id, canonical(m.text)) for m in memories if m.id not in held]
        before = _seen_memories(state, kind)
        texts = dict(shown) | {
            m.id: before.get(m.id, canonical(m.text)) for m in memories if m.id in held
        }
        return render(FILES[kind].removesuffix(".md"), shown, kept).encode(), texts, kept

    def _current(self, scope: Scope, kind: MemoryType, order: list[str | None]) -> list[MemoryItem]:
        """The type's valid memories: in the file's order, then the new ones oldest first."""
        found: list[MemoryItem] = []
        offset = 0
        while True:
            page, total = self._memory_reads.list_memories(
                scope, SearchFilters(types=[kind]), PAGE, offset
            )
            found += page
            offset += len(page)
            if not page or offset >= total:
                break
        rank = {memory_id: n for n, memory_id in enumerate(order) if memory_id}
        found.sort(key=lambda m: (rank.get(m.id, len(rank)), m.created_at, m.id))
        return found

    # reporting ---------------------------------------------------------------------------
    def _report(self, where: Path, problems: list[dict[str, Any]]) -> None:
        key = str(where.relative_to(self.root))
        with self._guard:
            before = self._problems.get(key, [])
            if problems:
                self._problems[key] = problems
            else:
                self._problems.pop(key, None)
        if problems and problems != before:
            for p in problems:
                log.warning(
                    "markdown mirror: %s/%s line %s kept as written: %s",
                    key,
                    p["file"],
                    p.get("line", 0),
                    p["reason"],
                )

    def status(self) -> dict[str, Any]:
        with self._guard:
            problems = [{"dir": d, **p} for d, ps in self._problems.items() for p in ps]
        return {
            "status": "degraded" if problems else "ok",
            "dir": str(self.root),
            "watcher": "running" if self._watcher.running else "off (dirty check before reads)",
            "problems": problems[:50],
        }

    @contextmanager
    def _locked(self, where: Path) -> Iterator[None]:
        """The tenant dir's lock, between threads and processes (an OS lock on the file)."""
        from filelock import FileLock

        with FileLock(str(where / LOCK), timeout=self._lock_timeout_s):
            yield


def _valid(items: list[MemoryItem]) -> MemoryItem | None:
    return items[0] if items and items[0].invalid_at is None else None


def _seen(state: dict[str, Any], kind: MemoryType) -> str | None:
    value = state.get("files", {}).get(FILES[kind], {}).get("sha256")
    return value if isinstance(value, str) else None


def _seen_memories(state: dict[str, Any], kind: MemoryType) -> dict[str, str]:
    value = state.get("files", {}).get(FILES[kind], {}).get("memories", {})
    return value if isinstance(value, dict) else {}
