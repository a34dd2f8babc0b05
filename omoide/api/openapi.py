"""The OpenAPI document, finished: short schema names and the bearer security scheme.

FastAPI names a model by its module path when two models share a name (``Added`` in
``omoide.api.models`` and in ``compat.<product>.models`` became ``omoide__api__models__Added``).
Here the native model keeps the plain name and a compatibility model gets its interface's name
in front (``AcmeAdded`` for ``compat.acme.models.Added``); every ``$ref`` follows.

``bearer`` is declared once and required everywhere except the open routes, so Swagger UI's
"Authorize" button sends ``Authorization: Bearer <key>`` on every call it makes.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

PREFIX = "#/components/schemas/"
OPEN_OPERATIONS = {("get", "/"), ("get", "/health")}
BEARER = {
    "type": "http",
    "scheme": "bearer",
    "description": "The API key (MEMORY_API_KEY / OMOIDE_API_KEY, or a tenant-bound key).",
}


def install(app: FastAPI) -> None:
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            finish(generate())  # FastAPI caches the dict it returns; finish it in place
        return app.openapi_schema or {}

    app.openapi = openapi  # type: ignore[method-assign]


def finish(schema: dict[str, Any]) -> None:
    components = schema.setdefault("components", {})
    schemas: dict[str, Any] = components.get("schemas", {})
    renames = short_names(list(schemas))
    if renames:
        components["schemas"] = {renames.get(k, k): v for k, v in schemas.items()}
        _rewrite_refs(schema, {PREFIX + old: PREFIX + new for old, new in renames.items()})
    components["securitySchemes"] = {"bearer": BEARER}
    schema["security"] = [{"bearer": []}]
    for path, operations in schema.get("paths", {}).items():
        for method, operation in operations.items():
            if (method, path) in OPEN_OPERATIONS:
                operation["security"] = []


def short_names(names: list[str]) -> dict[str, str]:
    """``{long: short}`` for every module-qualified name.

    >>> names = ["omoide__api__models__Added", "omoide__compat__acme__models__Added"]
    >>> list(short_names(names).values())
    ['Added', 'AcmeAdded']
    """
    taken = {n for n in names if "__" not in n}
    renames: dict[str, str] = {}
    for name in sorted(names, key=lambda n: (n.count("__"), n)):
        if "__" not in name:
            continue
        *modules, model = name.split("__")
        interface = _interface(modules)
        short = _title(interface) + model
        if short in taken:  # fall back to every module segment but the package's own
            short = "".join(_title(m) for m in modules if m != "omoide") + model
        taken.add(short)
        renames[name] = short
    return renames


def _interface(modules: list[str]) -> str:
    """An emulated product's models are named for the product (``compat.<product>.*``);
    a native module's for itself (``api.models`` -> none, ``api.v1.knowledge`` -> knowledge)."""
    if "compat" in modules[:-1]:
        return modules[modules.index("compat") + 1]
    return modules[-1].removesuffix("models").removesuffix("_")


def _title(segment: str) -> str:
    return "".join(part.capitalize() for part in segment.split("_"))


def _rewrite_refs(node: Any, refs: dict[str, str]) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref in refs:
            node["$ref"] = refs[ref]
        for value in node.values():
            _rewrite_refs(value, refs)
    elif isinstance(node, list):
        for value in node:
            _rewrite_refs(value, refs)
