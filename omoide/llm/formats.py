"""Structured-output negotiation: which ``response_format`` an endpoint takes, and the fallback.

Servers differ (sources in docs/llm.md):

- ``json_schema`` (OpenAI's form) is taken by OpenAI, vLLM, llama.cpp's llama-server (recent
  builds) and Ollama >= 0.5; llama-cpp-python's server answers it with HTTP 500, its request
  validation error ("Input should be 'text' or 'json_object'") wrapped as a server error.
- ``{"type": "json_object", "schema": ...}`` is llama-cpp-python's and llama-server's own way to
  constrain a reply to a schema; others ignore the extra key or reject it.
- ``{"type": "json_object"}`` is plain JSON mode; ``prompt`` sends no ``response_format``.

A rejection is recognised by its body, whatever the status (400, 422 and 500 are all seen), and
the next form in ``CHAIN`` is tried. ``FormatMemory`` keeps, per endpoint, the form in use, so
the fallback costs one request per form per process, not per call.
"""

from __future__ import annotations

import json
import threading
from typing import Any, Literal, TypeAlias

from pydantic import BaseModel

ResponseFormat: TypeAlias = Literal["json_schema", "json_object_schema", "json_object", "prompt"]
FormatSetting: TypeAlias = Literal[
    "auto", "json_schema", "json_object_schema", "json_object", "prompt"
]
CHAIN: tuple[ResponseFormat, ...] = ("json_schema", "json_object_schema", "json_object", "prompt")
Endpoint: TypeAlias = tuple[str, str]  # (base_url, model)

# Statuses a server uses to refuse a parameter. 429, 502-504 are outages even when the body
# happens to quote the request.
_REJECTION_STATUSES = frozenset({400, 415, 422, 500, 501})
_FORMAT_WORDS = ("response_format", "json_schema", "json_object", "structured output")

_HINT = (
    "\n\nReply with one JSON object and nothing else (no prose, no markdown), shaped like this "
    "example; its values only illustrate the shape, never copy them:\n{example}"
)


class FormatMemory:
    """The response format in use per endpoint; thread-safe, shared by clients of one process.

    >>> memory = FormatMemory()
    >>> memory.current(("http://llm/v1", "m"))
    'json_schema'
    >>> memory.downgrade(("http://llm/v1", "m"), "json_schema")
    'json_object_schema'
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._formats: dict[Endpoint, ResponseFormat] = {}
        self._confirmed: set[Endpoint] = set()
        self._completion_tokens: set[Endpoint] = set()

    def current(self, endpoint: Endpoint) -> ResponseFormat:
        with self._lock:
            return self._formats.get(endpoint, CHAIN[0])

    def confirmed(self, endpoint: Endpoint) -> ResponseFormat | None:
        """The format an answer was last received with, or None before the first answer."""
        with self._lock:
            return self._formats.get(endpoint, CHAIN[0]) if endpoint in self._confirmed else None

    def confirm(self, endpoint: Endpoint, fmt: ResponseFormat) -> None:
        with self._lock:
            if self._formats.get(endpoint, CHAIN[0]) == fmt:
                self._confirmed.add(endpoint)

    def budget_field(self, endpoint: Endpoint) -> str:
        """``max_tokens``, or ``max_completion_tokens`` for an endpoint that refused the first
        (OpenAI's reasoning models)."""
        with self._lock:
            return "max_completion_tokens" if endpoint in self._completion_tokens else "max_tokens"

    def use_completion_tokens(self, endpoint: Endpoint) -> bool:
        """Switch ``endpoint`` to ``max_completion_tokens``; False when it already was."""
        with self._lock:
            if endpoint in self._completion_tokens:
                return False
            self._completion_tokens.add(endpoint)
            return True

    def downgrade(self, endpoint: Endpoint, rejected: ResponseFormat) -> ResponseFormat | None:
        """The form to try after ``rejected``, or None when even ``prompt`` was rejected.

        Two threads rejected on the same form move one step, not two.
        """
        with self._lock:
            now = self._formats.get(endpoint, CHAIN[0])
            if CHAIN.index(now) > CHAIN.index(rejected):
                return now
            if rejected == CHAIN[-1]:
                return None
            self._formats[endpoint] = CHAIN[CHAIN.index(rejected) + 1]
            self._confirmed.discard(endpoint)
            return self._formats[endpoint]


SHARED = FormatMemory()


def rejects_format(status: int, body: str) -> bool:
    """True when an error response refuses the ``response_format`` rather than failing."""
    text = body.lower()
    return status in _REJECTION_STATUSES and any(word in text for word in _FORMAT_WORDS)


def refuses_max_tokens(status: int, body: str) -> bool:
    """OpenAI's reasoning models: 400 "Unsupported parameter: 'max_tokens' ... Use
    'max_completion_tokens' instead"."""
    return status == 400 and "max_completion_tokens" in body


def request_fields(fmt: ResponseFormat, schema: type[BaseModel]) -> dict[str, Any]:
    """The ``response_format`` entry of a request body for ``fmt`` (nothing for ``prompt``)."""
    if fmt == "json_schema":
        spec = {"name": schema.__name__, "schema": schema.model_json_schema()}
        return {"response_format": {"type": "json_schema", "json_schema": spec}}
    if fmt == "json_object_schema":
        return {"response_format": {"type": "json_object", "schema": schema.model_json_schema()}}
    if fmt == "json_object":
        return {"response_format": {"type": "json_object"}}
    return {}


def with_example_hint(system: str, fmt: ResponseFormat, schema: type[BaseModel]) -> str:
    """``system`` plus, when the server does not enforce the schema, a filled example object.

    An example, not the JSON Schema: small models echo a pasted schema back as their answer.
    Nothing is added when the prompt already shows the same example.
    """
    if fmt == "json_schema":
        return system
    example = json.dumps(example_of(schema), ensure_ascii=False)
    if example in system:
        return system
    return system + _HINT.format(example=example)


def example_of(schema: type[BaseModel]) -> Any:
    """The model's ``EXAMPLE`` (a neutral, filled answer), else one made from its JSON Schema."""
    given = getattr(schema, "EXAMPLE", None)
    if given is not None:
        return given
    spec = schema.model_json_schema()
    return _example(spec, spec.get("$defs", {}), "value")


def _example(spec: dict[str, Any], defs: dict[str, Any], name: str) -> Any:
    if "$ref" in spec:
        return _example(defs[spec["$ref"].rsplit("/", 1)[-1]], defs, name)
    for key in ("anyOf", "oneOf", "allOf"):
        options = [o for o in spec.get(key, []) if o.get("type") != "null"]
        if options:
            return _example(options[0], defs, name)
    if "enum" in spec:
        return spec["enum"][0]
    kind = spec.get("type")
    if kind == "object":
        props = spec.get("properties", {})
        return {key: _example(sub, defs, key) for key, sub in props.items()}
    if kind == "array":
        return [_example(spec.get("items", {}), defs, name)]
    return {"integer": 1, "number": 1.5, "boolean": True, "null": None}.get(
        str(kind), f"{name} text"
    )
