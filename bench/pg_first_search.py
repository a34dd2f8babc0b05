"""The first search after a bulk load on PostgreSQL (issue 35, point 3), old code vs new.

    python bench/pg_first_search.py --items 30000 --compare /old/tree --give-up 300

One throwaway pgserver; for each code (this checkout, and ``--compare``'s ``omoide`` if given)
a subprocess loads ``--items`` memories of ``bench/scale.py``'s corpus into one tenant of a
fresh schema through ``Memory.add_many`` (batches of 1,000, the hash embedder: no model time),
then times the first hybrid search and a second one. A search still running after
``--give-up`` seconds is reported as such and abandoned (the server is deleted at exit).

The server runs without autovacuum unless ``--autovacuum``: the first search then meets the
tables as a bulk load leaves them before autovacuum's next round, which is the case the issue
measured. With autovacuum on, whether its ANALYZE came first is luck (a slower load gives it
the time).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lib.common import DEFAULT_DATA

HERE = Path(__file__).resolve().parent

CHILD = r"""
import json, os, sys, threading, time
from pathlib import Path
sys.path.insert(0, sys.argv[5])
import lib.corpus
lib.corpus.DEFAULT_DATA = Path(sys.argv[6])
from lib.corpus import corpus_texts
from lib.pgserver import schema_url
from omoide import Memory, NewMemory
from omoide.embed.hashing import HashEmbedder

base, schema, n, give_up = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
memory = Memory(schema_url(base, schema), embedder=HashEmbedder(), workers=0)
texts = corpus_texts(n)
start = time.perf_counter()
for i in range(0, n, 1000):
    memory.add_many([NewMemory(text=t) for t in texts[i : i + 1000]], user_id="u")
out = {"ingest_s": round(time.perf_counter() - start, 1)}
for name, query in (("first", "What did Caroline do at the support group?"),
                    ("second", "Where did Melanie go camping?")):
    done = threading.Event()
    start = time.perf_counter()
    threading.Thread(target=lambda: (memory.search(query, user_id="u"), done.set()),
                     daemon=True).start()
    if not done.wait(give_up):
        out[name + "_s"] = f"> {give_up:.0f} (abandoned)"
        break
    out[name + "_s"] = round(time.perf_counter() - start, 3)
import omoide
out["code"] = str(Path(omoide.__file__).parent.parent)
print(json.dumps(out), flush=True)
os._exit(0)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=30_000)
    parser.add_argument("--give-up", type=float, default=300.0)
    parser.add_argument("--compare", type=Path)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--autovacuum", action="store_true")
    args = parser.parse_args()
    import psycopg
    from lib.pgserver import start_server

    base, _server = start_server()
    if not args.autovacuum:
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute("ALTER SYSTEM SET autovacuum = off")
            conn.execute("SELECT pg_reload_conf()")
    codes = {"new": HERE.parent, **({"old": args.compare} if args.compare else {})}
    for name, code in codes.items():
        cmd = [sys.executable, "-c", CHILD, base, name, str(args.items), str(args.give_up)]
        cmd += [str(HERE), str(args.data)]
        proc = subprocess.run(  # cwd: with -c the current folder comes first on sys.path
            cmd,
            env={**os.environ, "PYTHONPATH": str(code)},
            cwd=tempfile.gettempdir(),
            capture_output=True,
            text=True,
        )
        lines = proc.stdout.strip().splitlines()
        print(name, lines[-1] if lines else proc.stderr[-1500:], flush=True)


if __name__ == "__main__":
    main()
