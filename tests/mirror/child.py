"""Child process for tests/mirror: a Memory with the markdown mirror on a shared db and dir.

``add NAME COUNT``: adds COUNT semantic memories ("NAME note i"), one write each, printing
each id. ``hang``: adds one memory, then blocks inside the mirror's rename of
semantic_memory.md (after the temp file is written and fsynced), printing ``renaming``: the
parent kills it there.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

from omoide.engine.mirror import files as mirror_files
from omoide.store.protocol import NewMemory
from omoide.types import MemoryType
from tests.mirror.conftest import USER, open_memory


def main(db: str, root: str, command: str, *args: str) -> None:
    memory = open_memory(Path(db), Path(root))
    if command == "add":
        name, count = args[0], int(args[1])
        for i in range(count):
            [item] = memory.add_many(
                [NewMemory(text=f"{name} note {i}", type=MemoryType.SEMANTIC)], user_id=USER
            )
            sys.stdout.write(f"{item.id}\n")
            sys.stdout.flush()
        memory.close()
    elif command == "hang":
        real_replace = os.replace

        def stuck(src: str, dst: str) -> None:
            if str(dst).endswith("semantic_memory.md"):
                sys.stdout.write("renaming\n")
                sys.stdout.flush()
                threading.Event().wait()  # until SIGKILL
            real_replace(src, dst)

        mirror_files.os.replace = stuck  # type: ignore[assignment]
        memory.add_many([NewMemory(text=args[0], type=MemoryType.SEMANTIC)], user_id=USER)


if __name__ == "__main__":
    main(*sys.argv[1:])
