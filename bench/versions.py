"""Hybrid search latency of several checkouts of omoide, each on its own database, in one run.

    git worktree add /tmp/filing 1beb845      # e.g. the code of the day issue 13 was filed
    python bench/scale.py --scenarios one-100k --db-dir /tmp/f100k   # run from each checkout:
    python bench/scale.py --scenarios one-100k --db-dir /tmp/n100k   # (schemas differ)
    python bench/versions.py --run filing=/tmp/filing:/tmp/f100k/one-100k.db \\
        --run now=.:/tmp/n100k/one-100k.db [--rounds 3] [--queries 116] [--tenants 1]

Each round starts one process per checkout (``PYTHONPATH`` set to it), in rotating order; a
process opens its database with ``Memory(path, workers=0)`` and the default embedder, searches
the odd-numbered LoCoMo dev questions to warm up (vectors, graphs, caches), then times the
hybrid search (``limit=10``, query embedding included) of each even-numbered one (up to 116):
first unseen, then asked again (a server's steady state: its caches hold what they will). The
ratios are of each round's p50s to the first checkout's, then their median over the rounds:
the machine is shared and its speed moves.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import json, random, statistics, sys, time
sys.path.insert(0, {bench!r})
from lib.corpus import questions
import omoide
from omoide.memory import Memory
print("omoide from", omoide.__file__, file=sys.stderr)
engine = Memory({db!r}, workers=0)
every = questions(231)  # the dev questions: half warm the process up, the other half is timed
warm, qs = every[1::2], every[0::2][:{queries}]
rng = random.Random(7)
users = [f"user{{rng.randrange({tenants})}}" for _ in qs]
for q in warm:
    engine.search(q, user_id=f"user{{rng.randrange({tenants})}}", limit=10)
vectors = getattr(engine.store, "_vectors", None)
if vectors is not None and hasattr(vectors, "wait_for_builds"):
    vectors.wait_for_builds()
out = {{}}
for name in ("unseen", "again"):
    times = []
    for q, user in zip(qs, users):
        start = time.perf_counter()
        engine.search(q, user_id=user, limit=10)
        times.append(time.perf_counter() - start)
    times.sort()
    out[name] = {{"p50_ms": statistics.median(times) * 1000,
                 "p95_ms": times[int(len(times) * 0.95)] * 1000}}
print(json.dumps(out))
"""


def measure(tree: Path, db: Path, queries: int, tenants: int) -> dict[str, dict[str, float]]:
    bench = str(Path(__file__).resolve().parent)
    code = CHILD.format(bench=bench, db=str(db.resolve()), queries=queries, tenants=tenants)
    env = {**os.environ, "PYTHONPATH": str(tree.resolve())}
    # Run in the checkout: ``-c`` puts the working directory first on sys.path, before
    # PYTHONPATH, so another directory's omoide/ would shadow the checkout's.
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        cwd=tree.resolve(),
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--run", action="append", required=True, help="NAME=TREE:DB")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--queries", type=int, default=116)
    parser.add_argument("--tenants", type=int, default=1)
    args = parser.parse_args()
    runs: dict[str, tuple[Path, Path]] = {}
    for spec in args.run:
        name, _, where = spec.partition("=")
        tree, _, db = where.partition(":")
        runs[name] = (Path(tree), Path(db))
    names = list(runs)
    results: dict[str, list[dict[str, dict[str, float]]]] = {n: [] for n in names}
    for r in range(args.rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            got = measure(*runs[name], args.queries, args.tenants)
            results[name].append(got)
            print(f"round {r + 1} {name}: {json.dumps(got)}", flush=True)
    base = names[0]
    for when, title in (("unseen", "first search of each question"), ("again", "asked again")):
        print(f"\n{title}:\n")
        print(f"| checkout | p50 ms per round | p95 ms per round | p50 / {base} (median) |")
        print("|---|---|---|---|")
        for name in names:
            mine = [x[when] for x in results[name]]
            ratios = [
                a["p50_ms"] / b[when]["p50_ms"] for a, b in zip(mine, results[base], strict=True)
            ]
            p50s = ", ".join(f"{x['p50_ms']:.1f}" for x in mine)
            p95s = ", ".join(f"{x['p95_ms']:.1f}" for x in mine)
            print(f"| {name} | {p50s} | {p95s} | {statistics.median(ratios):.2f}x |")


if __name__ == "__main__":
    main()
