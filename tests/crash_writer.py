"""Child process for test_crash.py: adds memories in a loop and prints each acknowledged id.

Every third add happens while the embedder is down, so its vector is left to a durable job.
"""

from __future__ import annotations

import sys

from omoide import Memory
from omoide.embed import HashEmbedder
from omoide.embed.remote import OpenAICompatEmbedder


def main(path: str, run: int) -> None:
    up, down = HashEmbedder(), OpenAICompatEmbedder("http://127.0.0.1:9/v1", "x", timeout=0.2)
    with Memory(path, embedder=up, workers=0) as memory:
        for i in range(100_000):
            memory.embedder = down if i % 3 == 0 else up
            items = memory.add(
                [
                    {"role": "user", "content": f"run {run} note {i} about tea"},
                    {"role": "assistant", "content": f"reply {i}"},
                ],
                user_id=f"user{i % 4}",
                session_id=f"s{run}-{i % 7}",
            )
            if i % 11 == 0:
                memory.delete(items[1].id, user_id=f"user{i % 4}")
                items = items[:1]
            for item in items:
                sys.stdout.write(f"{item.user_id} {item.id}\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
