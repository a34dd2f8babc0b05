"""Which omoide classes a write (Memory.add) and a search (Memory.search) pass through.

Counted dynamically: every Python frame inside the omoide package during one call, grouped by
the class that defines the running function (methods) or its module (plain functions).
Usage: python tools/call_path.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from omoide import Memory
from omoide.embed import HashEmbedder


def trace(fn):
    classes: set[str] = set()
    modules: set[str] = set()
    mros: dict[str, int] = {}

    def prof(frame, event, _arg):
        if event != "call":
            return
        mod = frame.f_globals.get("__name__", "")
        if not mod.startswith("omoide"):
            return
        modules.add(mod)
        qual = frame.f_code.co_qualname.split(".<locals>")[0]
        if "." in qual and not qual.startswith("__create_fn__"):
            classes.add(f"{mod}.{qual.rsplit('.', 1)[0]}")
        owner = frame.f_locals.get("self")
        if owner is not None and type(owner).__module__.startswith("omoide"):
            mros[type(owner).__qualname__] = len(type(owner).__mro__) - 1  # without object

    sys.setprofile(prof)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return classes, modules, mros


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        mem = Memory(Path(tmp) / "m.db", embedder=HashEmbedder(), workers=0)
        mem.add("warm up", user_id="u")
        mem.search("warm", user_id="u")
        for name, fn in (
            ("write (Memory.add)", lambda: mem.add("I like jasmine tea", user_id="u")),
            ("search (Memory.search)", lambda: mem.search("what tea?", user_id="u")),
        ):
            classes, modules, mros = trace(fn)
            print(
                f"{name}: methods of {len(classes)} classes in {len(modules)} modules run; "
                f"objects: {len(mros)}, their classes incl. bases: {sum(mros.values())}"
            )
            print(
                "    objects (MRO size):", ", ".join(f"{k} ({v})" for k, v in sorted(mros.items()))
            )
            for c in sorted(classes):
                print("   ", c)
        print("Memory MRO:", len(type(mem).__mro__), "classes")
        mem.close()


if __name__ == "__main__":
    main()
