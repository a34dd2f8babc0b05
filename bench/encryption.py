"""What whole-database encryption would cost (issue 15, "Encryption at rest"): a measurement,
not a feature. Neither package is a dependency of omoide; install them somewhere first:

    python -m venv /tmp/enc && /tmp/enc/bin/pip install sqlcipher3-binary apsw-sqlite3mc
    python bench/encryption.py --site /tmp/enc/lib/python3.11/site-packages

Two parts, each configuration in its own process:

* ``raw``: the store's shape without omoide (a table, an FTS5 index kept by triggers, WAL,
  ``synchronous=NORMAL``): 20,000 rows in transactions of 500, then 2,000 keyword queries and
  2,000 lookups by key. Stdlib ``sqlite3``; SQLCipher 4 (``sqlcipher3-binary``) without and
  with a key; SQLite3 Multiple Ciphers (``apsw-sqlite3mc``, default cipher ChaCha20-Poly1305)
  without and with a key.
* ``omoide``: the real store (``Memory.add_many`` of 10,000 memories in batches of 500 with
  the model-free HashEmbedder, then 300 hybrid searches) on stdlib ``sqlite3`` and on SQLCipher
  swapped in for ``sqlite3`` (a DB-API drop-in; every connection keyed first). APSW is not
  DB-API, so omoide cannot run on it without a port of ``omoide/store/sqlite``.

Prints one JSON line per run and the ratios to the unencrypted baseline.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

KEY = "correct horse battery staple"

RAW = r"""
import json, sys, time
site, kind, keyed, path = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4]
sys.path.append(site)
KEY = "correct horse battery staple"
if kind == "apsw":
    import apsw
    conn = apsw.Connection(path)
    if keyed:
        conn.execute(f"PRAGMA key = '{KEY}'")
    run = lambda sql, args=(): list(conn.execute(sql, args))
    many = lambda sql, rows: conn.executemany(sql, rows)
else:
    if kind == "sqlcipher":
        from sqlcipher3 import dbapi2 as sqlite3
    else:
        import sqlite3
    conn = sqlite3.connect(path, isolation_level=None)
    if keyed:
        conn.execute(f"PRAGMA key = '{KEY}'")
    run = lambda sql, args=(): conn.execute(sql, args).fetchall()
    many = lambda sql, rows: conn.executemany(sql, rows)
run("PRAGMA journal_mode = WAL"); run("PRAGMA synchronous = NORMAL")
run("CREATE TABLE m (seq INTEGER PRIMARY KEY, id TEXT UNIQUE, tenant TEXT, text TEXT, vec BLOB)")
run("CREATE VIRTUAL TABLE f USING fts5(text, content='m', content_rowid='seq')")
run("CREATE TRIGGER mi AFTER INSERT ON m BEGIN"
    " INSERT INTO f(rowid, text) VALUES (new.seq, new.text); END")
words = "tea coffee osaka lisbon sister holiday hokkaido train garden piano cat dog rain".split()
t = time.perf_counter()
for b in range(40):
    run("BEGIN IMMEDIATE")
    many("INSERT INTO m (id, tenant, text, vec) VALUES (?, ?, ?, ?)", [
        (f"id{b}-{i}", f"t{i % 10}",
         " ".join(words[(b * 7 + i * k) % len(words)] for k in range(12)),
         bytes(1536)) for i in range(500)])
    run("COMMIT")
write = time.perf_counter() - t
t = time.perf_counter()
for q in range(2000):
    run("SELECT rowid, bm25(f) FROM f WHERE f MATCH ? ORDER BY bm25(f) LIMIT 20",
        (words[q % len(words)],))
search = time.perf_counter() - t
t = time.perf_counter()
for q in range(2000):
    run("SELECT text, vec FROM m WHERE id = ?", (f"id{q % 40}-{q % 500}",))
lookup = time.perf_counter() - t
print(json.dumps(
    {"write_s": round(write, 3), "fts_s": round(search, 3), "lookup_s": round(lookup, 3)}
))
"""

OMOIDE = r"""
import json, sys, time
site, kind, path = sys.argv[1], sys.argv[2], sys.argv[3]
if kind == "sqlcipher":
    sys.path.append(site)
    import types
    from sqlcipher3 import dbapi2
    shim = types.ModuleType("sqlite3")
    shim.__dict__.update(dbapi2.__dict__)
    def connect(*args, **kwargs):
        conn = dbapi2.connect(*args, **kwargs)
        conn.execute("PRAGMA key = 'correct horse battery staple'")
        return conn
    shim.connect = connect
    sys.modules["sqlite3"] = shim
from omoide import Memory
from omoide.embed import HashEmbedder
from omoide.store.protocol import NewMemory
words = "tea coffee osaka lisbon sister holiday hokkaido train garden piano cat dog rain".split()
with Memory(path, embedder=HashEmbedder(384), workers=0) as m:
    t = time.perf_counter()
    for b in range(20):
        m.add_many([NewMemory(text=" ".join(words[(b * 7 + i * k) % len(words)] for k in range(12)))
                    for i in range(500)], user_id="alice")
    write = time.perf_counter() - t
    t = time.perf_counter()
    for q in range(300):
        m.search(f"{words[q % len(words)]} {words[(q * 3) % len(words)]}", user_id="alice")
    search = time.perf_counter() - t
print(json.dumps({"add_10k_s": round(write, 3), "search_300_s": round(search, 3)}))
"""


def run(script: str, *args: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, check=True
    )
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", required=True, help="site-packages with both packages")
    parser.add_argument("--repeat", type=int, default=3, help="runs per configuration (best)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        raw: dict[str, dict[str, float]] = {}
        for name, kind, keyed in [
            ("stdlib", "stdlib", "0"),
            ("sqlcipher-nokey", "sqlcipher", "0"),
            ("sqlcipher-key", "sqlcipher", "1"),
            ("sqlite3mc-nokey", "apsw", "0"),
            ("sqlite3mc-key", "apsw", "1"),
        ]:
            runs = [
                run(RAW, args.site, kind, keyed, str(Path(folder) / f"{name}-{i}.db"))
                for i in range(args.repeat)
            ]
            raw[name] = {k: min(r[k] for r in runs) for k in runs[0]}
            print(json.dumps({"part": "raw", "config": name, **raw[name]}))
        for name, base in [
            ("sqlcipher-key", "sqlcipher-nokey"),
            ("sqlite3mc-key", "sqlite3mc-nokey"),
        ]:
            ratios = {k: round(raw[name][k] / raw[base][k], 2) for k in raw[name]}
            print(json.dumps({"part": "raw", "ratio": f"{name} / {base}", **ratios}))
            ratios = {k: round(raw[name][k] / raw["stdlib"][k], 2) for k in raw[name]}
            print(json.dumps({"part": "raw", "ratio": f"{name} / stdlib", **ratios}))
        full: dict[str, dict[str, float]] = {}
        for kind in ("stdlib", "sqlcipher"):
            runs = [
                run(OMOIDE, args.site, kind, str(Path(folder) / f"omoide-{kind}-{i}.db"))
                for i in range(args.repeat)
            ]
            full[kind] = {k: min(r[k] for r in runs) for k in runs[0]}
            print(json.dumps({"part": "omoide", "config": kind, **full[kind]}))
        ratios = {k: round(full["sqlcipher"][k] / full["stdlib"][k], 2) for k in full["stdlib"]}
        print(json.dumps({"part": "omoide", "ratio": "sqlcipher-key / stdlib", **ratios}))


if __name__ == "__main__":
    main()
