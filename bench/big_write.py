"""How long one big ``add`` blocks every other writer (issue 15, item 8).

    python bench/big_write.py                 # 10,000 messages in one request, then 1,000
    python bench/big_write.py --messages 2000

One process adds N messages to one session in one call (HashEmbedder: the model is not what is
measured, and embedding happens before the write transaction anyway) while a second thread of
the same process, and a second process on the same file, each add one small memory every
20 ms. Reported: the big add's time, and the longest wait of a small add in each writer, i.e.
how long the big write held the database's write lock. With ``OMOIDE_MAX_MESSAGES`` (default
1,000) a request over the cap is refused with a 422 before anything is written; the numbers
show what a request at the cap costs the others.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from omoide import Memory
from omoide.embed import HashEmbedder
from omoide.types import Message

SMALL_WRITER = """
import json, sys, threading, time
from omoide import Memory
from omoide.embed import HashEmbedder
stop = threading.Event()
threading.Thread(target=lambda: (sys.stdin.readline(), stop.set()), daemon=True).start()
with Memory(sys.argv[1], embedder=HashEmbedder(), workers=0) as m:
    print("ready", flush=True)
    worst = 0.0
    while not stop.is_set():
        t = time.monotonic()
        m.add("small note", user_id="other")
        worst = max(worst, time.monotonic() - t)
        time.sleep(0.02)
    print(json.dumps({"worst_s": round(worst, 3)}), flush=True)
"""


def measure(messages: int, big_limit: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "big.db"
        # The cap is lifted for the measurement of what an uncapped request cost.
        from omoide.config import Settings

        settings = Settings(max_messages=max(big_limit, messages))
        with Memory(path, embedder=HashEmbedder(), workers=0, settings=settings) as memory:
            memory.add("warm up", user_id="other")
            child = subprocess.Popen(
                [sys.executable, "-c", SMALL_WRITER, str(path)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            assert child.stdout is not None
            child.stdout.readline()  # ready
            worst = [0.0]
            stop = threading.Event()

            def small_writes() -> None:
                while not stop.is_set():
                    t = time.monotonic()
                    memory.add("small note", user_id="thread")
                    worst[0] = max(worst[0], time.monotonic() - t)
                    time.sleep(0.02)

            thread = threading.Thread(target=small_writes)
            thread.start()
            time.sleep(1)
            pairs = [
                Message(role="user" if i % 2 == 0 else "assistant", content=f"turn {i} about tea")
                for i in range(messages)
            ]
            t = time.monotonic()
            memory.add(pairs, user_id="big", session_id="s1")
            big = time.monotonic() - t
            time.sleep(1)
            stop.set()
            thread.join()
            out = child.communicate("stop\n", timeout=120)[0]
        other = json.loads(out.splitlines()[-1]) if out.strip().startswith("{") else {}
    return {
        "messages": messages,
        "big_add_s": round(big, 3),
        "same_process_worst_wait_s": round(worst[0], 3),
        "other_process_worst_wait_s": other.get("worst_s", float("nan")),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, nargs="*", default=[10_000, 1_000])
    args = parser.parse_args()
    for n in args.messages:
        print(json.dumps(measure(n, n)))


if __name__ == "__main__":
    main()
