"""Child process for test_reindex_kill.py: reindexes with a 32-d embedder, batches of 50, and
prints one line per committed batch; after ``stop_after`` batches it waits on stdin (which the
test never answers) so the kill lands after a known number of batches, not after a time."""

from __future__ import annotations

import sys

from omoide import Memory
from omoide.embed import HashEmbedder


def main(path: str, stop_after: int) -> None:
    batches = 0

    def progress(done: int, total: int) -> None:
        nonlocal batches
        batches += 1
        sys.stdout.write(f"batch {batches} {done}/{total}\n")
        sys.stdout.flush()
        if batches == stop_after:
            sys.stdin.readline()  # blocks until killed

    with Memory(path, embedder=HashEmbedder(32), workers=0) as memory:
        done = memory.reindex(progress, batch=50)
        sys.stdout.write(f"done {done}\n")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
