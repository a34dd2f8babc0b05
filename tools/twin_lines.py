"""Lines the two SQL backends write twice: of the non-blank lines (over 3 characters, stripped)
of ``omoide/store/postgres/``'s modules, the share that also stands in the SQLite module of the
same name (``%s`` read as ``?``; a module without a twin counts with none). Issue 32's
measure of what ``store/sql/`` removes.

    python tools/twin_lines.py            # per module, then the total
    python tools/twin_lines.py --total    # the total line only
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "omoide" / "store"


def lines(path: Path) -> list[str]:
    out = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip().replace("%s", "?")
        if len(line) > 3:
            out.append(line)
    return out


def main() -> None:
    rows = []
    for pg in sorted((ROOT / "postgres").glob("*.py")):
        twin = ROOT / "sqlite" / pg.name
        theirs = set(lines(twin)) if twin.exists() else set()
        ours = lines(pg)
        rows.append((pg.name, sum(line in theirs for line in ours), len(ours)))
    same = sum(r[1] for r in rows)
    total = sum(r[2] for r in rows)
    if "--total" not in sys.argv:
        for name, n, of in sorted(rows, key=lambda r: -r[1] / max(r[2], 1)):
            print(f"{name:24} {n:5} of {of:5}  {n / max(of, 1):4.0%}")
    paired = [r for r in rows if (ROOT / "sqlite" / r[0]).exists()]
    of_paired = sum(r[2] for r in paired)
    print(
        f"{same:,} of {total:,} lines of {len(rows)} PostgreSQL modules also in their SQLite twin"
        f" = {same / max(total, 1):.1%}; of the {len(paired)} modules with a twin:"
        f" {same:,} of {of_paired:,} = {same / max(of_paired, 1):.1%}"
    )


if __name__ == "__main__":
    main()
