"""Code size figures for a package: function lengths (median, p90, max) and file lengths.

python tools/codesize.py [DIR]     # default: omoide
"""

from __future__ import annotations

import ast
import statistics
import sys
from pathlib import Path


def main() -> None:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "omoide")
    functions: list[tuple[int, str]] = []
    files: list[tuple[int, str]] = []
    for path in sorted(root.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        files.append((len(source.splitlines()), str(path)))
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                end = node.end_lineno or node.lineno
                functions.append((end - node.lineno + 1, f"{path}:{node.name}"))
    lengths = sorted(n for n, _ in functions)
    p90 = lengths[int(0.9 * len(lengths))]
    print(f"functions {len(lengths)}: median {statistics.median(lengths)} lines, p90 {p90},")
    print(f"  max {max(functions)}")
    print(f"files {len(files)}: {sum(n for n, _ in files)} lines, max {max(files)}")


if __name__ == "__main__":
    main()
