"""The request shapes of the real app, read from its OpenAPI document.

``operations(spec)`` lists every operation with its parameters and JSON body schema;
``example(schema)`` builds a minimal body the schema accepts; ``slots(schema)`` lists every place
in a body where a string (or an integer) can go: properties at any depth, array items, and
the keys and values of free-form objects such as ``metadata``. The tests put hostile values
into each slot of a valid body, so a 422 they get is about that value and nothing else.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

Path = tuple[str | int, ...]
KEY = "<key>"  # a slot that is the key of a free-form object, not a value
ANY = "<any>"  # a slot whose schema accepts any JSON value


@dataclass
class Operation:
    method: str
    path: str
    params: list[dict[str, Any]]
    body: dict[str, Any] | None
    name: str = field(init=False)

    def __post_init__(self) -> None:
        self.name = f"{self.method} {self.path}"

    def url(self, values: dict[str, str]) -> str:
        """The path with its parameters filled (percent-encoded) and the query string."""
        path = self.path
        query = []
        for param in self.params:
            value = values.get(param["name"])
            if param["in"] == "path":
                path = path.replace("{" + param["name"] + "}", quote(value or "x", safe=""))
                path = path.replace("{" + param["name"] + ":path}", quote(value or "x", safe=""))
            elif param["in"] == "query" and value is not None:
                query.append(f"{quote(param['name'])}={quote(value, safe='')}")
        return path + ("?" + "&".join(query) if query else "")


class Schemas:
    def __init__(self, spec: dict[str, Any]) -> None:
        self.components: dict[str, Any] = spec.get("components", {}).get("schemas", {})

    def resolve(self, schema: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in schema:
            schema = self.components[schema["$ref"].split("/")[-1]]
        return schema

    def options(self, schema: dict[str, Any]) -> list[dict[str, Any]]:
        """The alternatives of a schema (``anyOf``/``oneOf``), ``null`` last."""
        schema = self.resolve(schema)
        alternatives = schema.get("anyOf") or schema.get("oneOf")
        if not alternatives:
            return [schema]
        resolved = [self.resolve(s) for s in alternatives]
        return sorted(resolved, key=lambda s: s.get("type") == "null")

    def example(self, schema: dict[str, Any], depth: int = 0) -> Any:
        """A value the schema accepts: its documented example, else required properties only."""
        schema = self.options(schema)[0]
        if schema.get("examples"):  # the documented example: valid as a whole
            return copy.deepcopy(schema["examples"][0])
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            return schema["enum"][0]
        kind = schema.get("type")
        if kind == "string":
            return "x" * max(1, schema.get("minLength", 1))
        if kind in ("integer", "number"):
            low = schema.get("minimum", schema.get("exclusiveMinimum", 0) + 1)
            return int(low) if kind == "integer" else float(low)
        if kind == "boolean":
            return False
        if kind == "array":
            items = schema.get("items", {"type": "string"})
            return [
                self.example(items, depth + 1) for _ in range(max(1, schema.get("minItems", 1)))
            ]
        if kind == "object" or "properties" in schema:
            props = schema.get("properties", {})
            return {
                name: self.example(props[name], depth + 1) for name in schema.get("required", [])
            }
        return "x"

    def slots(
        self, schema: dict[str, Any], kinds: set[str], seen: frozenset[str] = frozenset()
    ) -> list[Path]:
        """Every path in a body where a value of ``kinds`` (or ``ANY``) can go."""
        out: list[Path] = []
        for option in self.options(schema):
            ref = schema.get("$ref", "")
            if ref in seen:
                continue
            inner = seen | {ref} if ref else seen
            kind = option.get("type")
            if kind in kinds:
                out.append(())
            elif kind == "array":
                out += [(0, *p) for p in self.slots(option.get("items", {}), kinds, inner)]
            elif kind == "object" or "properties" in option:
                for name, sub in option.get("properties", {}).items():
                    out += [(name, *p) for p in self.slots(sub, kinds, inner)]
                extra = option.get("additionalProperties")
                if extra is not None and extra is not False:
                    out.append((KEY,))
                    extra = extra if isinstance(extra, dict) else {}
                    out += [("k", *p) for p in self.slots(extra, kinds, inner)]
            elif kind is None and not option.get("enum") and "const" not in option:
                out.append((ANY,))
        return list(dict.fromkeys(out))


def operations(spec: dict[str, Any]) -> list[Operation]:
    schemas = Schemas(spec)
    out = []
    for path, methods in spec["paths"].items():
        for method, op in methods.items():
            body = op.get("requestBody", {}).get("content", {}).get("application/json", {})
            params = [
                dict(p, schema=schemas.resolve(p.get("schema", {})))
                for p in op.get("parameters", [])
            ]
            out.append(Operation(method.upper(), path, params, body.get("schema")))
    return out


def place(schemas: Schemas, body_schema: dict[str, Any], slot: Path, value: Any) -> Any:
    """A valid body with ``value`` at ``slot`` (as a key for ``KEY``, nested for ``ANY``)."""
    body = copy.deepcopy(schemas.example(body_schema))
    return _set(schemas, body_schema, body, slot, value)


def _set(schemas: Schemas, schema: dict[str, Any], current: Any, slot: Path, value: Any) -> Any:
    if not slot:
        return value
    head, rest = slot[0], slot[1:]
    if head == KEY:
        return {value: "v"} if isinstance(value, str) else {"k": value}
    if head == ANY:
        return {"nested": [{"deep": value}]}  # any depth, any container
    option = _container_option(schemas, schema, head)
    if isinstance(head, int):
        items = option.get("items", {})
        container = current if isinstance(current, list) and current else [schemas.example(items)]
        container[0] = _set(schemas, items, container[0], rest, value)
        return container
    container = current if isinstance(current, dict) else schemas.example(option)
    if not isinstance(container, dict):
        container = {}
    sub = option.get("properties", {}).get(head) or option.get("additionalProperties") or {}
    sub = sub if isinstance(sub, dict) else {}
    existing = container.get(head, schemas.example(sub) if sub else None)
    container[head] = _set(schemas, sub, existing, rest, value)
    return container


def _container_option(schemas: Schemas, schema: dict[str, Any], head: str | int) -> dict[str, Any]:
    for option in schemas.options(schema):
        if isinstance(head, int) and option.get("type") == "array":
            return option
        if isinstance(head, str) and (option.get("type") == "object" or "properties" in option):
            return option
    return schemas.options(schema)[0]


def dumps(body: Any) -> bytes:
    """JSON with ``\\u`` escapes, so a lone surrogate travels as the escape a client would send."""
    return json.dumps(body, ensure_ascii=True).encode("ascii")
