"""``FileWatcher``: edits to the markdown memory files picked up as they are saved (watchdog).

Optional: without the ``files`` extra's ``watchdog`` the watcher does not start and the
mirror's dirty check before each search and listing picks edits up instead.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

log = logging.getLogger("omoide.mirror")

# A file is read once it is whole: on Linux when its writer closes it (or it is renamed into
# place), not on each write of an editor saving in place, which would read half a file (and
# take the missing half for deleted memories). Elsewhere there is no close event.
EVENTS = (
    frozenset({"closed", "moved"})
    if sys.platform.startswith("linux")
    else frozenset({"created", "modified", "moved"})
)


class FileWatcher:
    """Calls ``changed(path)`` (in watchdog's thread) for each ``*.md`` written (``EVENTS``)
    or renamed into place under ``root``; a failing call is logged and the watch goes on."""

    def __init__(self, root: Path, changed: Callable[[Path], None]) -> None:
        self._root = root
        self._changed = changed
        self._observer: Any = None

    @property
    def running(self) -> bool:
        return self._observer is not None

    def start(self) -> bool:
        """Start watching; False (and a log line) when watchdog is not installed."""
        try:
            from watchdog.events import FileSystemEvent, FileSystemEventHandler
            from watchdog.observers import Observer
        except ImportError:
            log.info("watchdog not installed: markdown edits are picked up before each read")
            return False
        changed = self._changed

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event: FileSystemEvent) -> None:
                if event.event_type not in EVENTS:
                    return
                target = getattr(event, "dest_path", "") or event.src_path
                path = Path(target if isinstance(target, str) else target.decode())
                if event.is_directory or path.suffix != ".md" or path.name.startswith("."):
                    return
                try:
                    changed(path)
                except Exception:
                    log.exception("markdown mirror: could not ingest %s", path)

        self._root.mkdir(parents=True, exist_ok=True)
        observer = Observer()
        observer.schedule(Handler(), str(self._root), recursive=True)
        observer.daemon = True
        observer.start()
        self._observer = observer
        return True

    def stop(self) -> None:
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=10)
            self._observer = None
