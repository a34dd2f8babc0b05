"""The architecture's guard rails: composition over inheritance, and imports without cycles.

import-linter checks the layers; these checks cover what its contracts cannot express: a cycle
anywhere inside ``omoide`` (``TYPE_CHECKING`` imports included, since a cycle hidden behind one
still couples the modules) and classes assembled from several bases.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import grimp

PACKAGE = Path(__file__).resolve().parent.parent / "omoide"
# Where several bases are the design: an error is both an OmoideError and a builtin error.
ALLOWED_MULTIPLE_BASES = {"errors.py"}
NEUTRAL_BASES = {"Protocol", "Generic"}


def _classes() -> list[tuple[str, ast.ClassDef]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                found.append((str(path.relative_to(PACKAGE)), node))
    return found


def _base_name(base: ast.expr) -> str:
    if isinstance(base, ast.Subscript):
        base = base.value
    if isinstance(base, ast.Attribute):
        return base.attr
    return base.id if isinstance(base, ast.Name) else ast.unparse(base)


def test_no_mixins() -> None:
    mixins = [f"{path}:{node.name}" for path, node in _classes() if node.name.endswith("Mixin")]
    assert mixins == []


def test_no_class_is_assembled_from_several_bases() -> None:
    assembled = []
    for path, node in _classes():
        bases = [_base_name(b) for b in node.bases if _base_name(b) not in NEUTRAL_BASES]
        if len(bases) > 1 and Path(path).name not in ALLOWED_MULTIPLE_BASES:
            assembled.append(f"{path}:{node.name}({', '.join(bases)})")
    assert assembled == []


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, child = work.pop()
            if child == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            if child < len(edges[node]):
                work.append((node, child + 1))
                target = edges[node][child]
                if target not in index:
                    work.append((target, 0))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            for target in edges[node]:
                if target in on_stack:
                    low[node] = min(low[node], low[target])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return components


def test_no_import_cycles_inside_the_package() -> None:
    graph = grimp.build_graph("omoide", exclude_type_checking_imports=False)
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = grimp.ImportGraph()
    for module in ("pkg.a", "pkg.b", "pkg.c"):
        graph.add_module(module)
    graph.add_import(importer="pkg.a", imported="pkg.b")
    graph.add_import(importer="pkg.b", imported="pkg.c")
    graph.add_import(importer="pkg.c", imported="pkg.a")
    assert _cycles(graph) == [["pkg.a", "pkg.b", "pkg.c"]]


# The emulated products' words. Only their own folders (``compat/<product>/``) and the
# composition root that mounts them (``serve/``) may say them; the core says what a behaviour
# is in its own terms, and docs/compat/<product>.md says where it came from.
PRODUCT_WORDS = re.compile(r"jiuwen|nexus|wilmer|mem0", re.IGNORECASE)
PRODUCT_HOMES = ("compat", "serve")
# Modules outside those homes that may still name a product, each with its reason. An entry
# whose module no longer names one must leave the list (the test says so).
VOCABULARY_EXCEPTIONS = {
    # The product's own names are the interface here: ``Settings.compat.jiuwen`` / ``.nexus`` /
    # ``.wilmer`` / ``.jiuwen_cosine_threshold`` (public API, ``OMOIDE_COMPAT_*`` and
    # ``OMOIDE_JIUWEN_*``), JiuwenMemory's environment names accepted as aliases and WilmerAI's
    # chunking keys (``chunkEstimatedTokenSize``, ...). Settings are the bottom layer: they
    # cannot import a compat package to borrow these, and ``Memory()`` (below compat) reads the
    # same environment names, so they cannot be registered from above either.
    "config.py",
}


def _naming_a_product() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative.split("/")[0] in PRODUCT_HOMES:
            continue
        if PRODUCT_WORDS.search(path.read_text(encoding="utf-8")):
            found.append(relative)
    return found


def test_only_compat_and_the_composition_root_name_an_emulated_product() -> None:
    offenders = [p for p in _naming_a_product() if p not in VOCABULARY_EXCEPTIONS]
    assert offenders == [], f"modules naming jiuwen/nexus/wilmer/mem0 outside compat/: {offenders}"


def test_every_vocabulary_exception_still_names_a_product() -> None:
    stale = sorted(VOCABULARY_EXCEPTIONS - set(_naming_a_product()))
    assert stale == [], f"no longer name a product, take them off VOCABULARY_EXCEPTIONS: {stale}"
