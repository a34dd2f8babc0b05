"""How real OpenAI-compatible servers treat ``response_format``, ``max_tokens`` and outages.

Each ``Profile`` is taken from the server's documentation, source or issue tracker (cited per
profile); ``FakeLLMServer(profile=...)`` behaves accordingly. The forms of ``response_format``:

- ``json_schema``: ``{"type": "json_schema", "json_schema": {"name": ..., "schema": ...}}``
- ``json_object_schema``: ``{"type": "json_object", "schema": {...}}`` (llama.cpp's own form)
- ``json_object``: ``{"type": "json_object"}``
- ``prompt``: no ``response_format``

``generic`` is the idealised server the suite always had: every form accepted, nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

Form: TypeAlias = Literal["json_schema", "json_object_schema", "json_object", "prompt", "other"]
OutageKind: TypeAlias = Literal["http", "refused"]


@dataclass(frozen=True)
class Profile:
    name: str
    accepts: frozenset[str]
    reject_status: int = 400
    # the error body for a refused form; "{form}"/"{type}" are filled in
    reject_body: dict[str, Any] | None = None
    literal_newlines: bool = False  # the model writes raw newlines inside JSON strings
    default_max_tokens: int = 4096  # what a request without max_tokens may generate
    outage: OutageKind = "http"
    outage_status: int = 503
    outage_body: dict[str, Any] | None = None
    json_word_required: bool = False  # json_object needs "json" in the messages (OpenAI)
    completion_tokens_only: bool = False  # max_tokens refused: OpenAI's reasoning models

    def rejection(self, form: Form, fmt_type: str) -> dict[str, Any]:
        body = self.reject_body or {"error": {"message": "unsupported response_format {type}"}}
        filled: dict[str, Any] = _fill(body, form=form, type=fmt_type)
        return filled


def _fill(value: Any, **names: str) -> Any:
    if isinstance(value, str):
        return value.format(**names)
    if isinstance(value, dict):
        return {k: _fill(v, **names) for k, v in value.items()}
    return value


ALL_FORMS = frozenset({"json_schema", "json_object_schema", "json_object", "prompt", "other"})

GENERIC = Profile("generic", accepts=ALL_FORMS)

# platform.openai.com/docs/guides/structured-outputs: json_schema (gpt-4o and later) and
# json_object, which needs the word "JSON" in the messages or it is a 400; unknown keys in a
# request object are a 400 invalid_request_error. 503 "The server is overloaded or not ready yet".
OPENAI = Profile(
    "openai",
    accepts=frozenset({"json_schema", "json_object", "prompt"}),
    reject_status=400,
    reject_body={
        "error": {
            "message": "Invalid parameter: 'response_format' of type '{type}' with an extra "
            "'schema' is not supported ('{form}').",
            "type": "invalid_request_error",
            "param": "response_format",
            "code": None,
        }
    },
    default_max_tokens=16384,
    json_word_required=True,
    outage_status=503,
    outage_body={
        "error": {
            "message": "The server is overloaded or not ready yet.",
            "type": "server_error",
            "param": None,
            "code": None,
        }
    },
)

# llama-cpp-python 0.3.x (llama_cpp/server/types.py, errors.py): response_format type is
# Literal["text", "json_object"] with an optional "schema" that becomes a grammar; a
# json_schema request fails validation, and RouteErrorHandler wraps every exception as HTTP 500
# {"error": {"message": str(exc), "type": "internal_server_error", ...}} (issue 16; PR #1677 to
# accept json_schema is still open). max_tokens defaults to None: generate until n_ctx is full.
# uvicorn listens only once the model is loaded: during a restart connections are refused.
LLAMA_CPP_PYTHON = Profile(
    "llama_cpp_python",
    accepts=frozenset({"json_object_schema", "json_object", "prompt"}),
    reject_status=500,
    reject_body={
        "error": {
            "message": "[{{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
            "'msg': \"Input should be 'text' or 'json_object'\", 'input': '{type}', "
            "'ctx': {{'expected': \"'text' or 'json_object'\"}}}}]",
            "type": "internal_server_error",
            "param": None,
            "code": None,
        }
    },
    literal_newlines=True,
    default_max_tokens=2048,
    outage="refused",
)

# llama.cpp llama-server (tools/server/README.md): json_object, json_object with "schema", and
# json_schema (since PR #9527, Sept 2024; older builds answered 500 "response_format type must be
# one of \"text\" or \"json_object\", but got: json_schema"). n_predict -1: until the context is
# full. While the model loads: 503 {"error": {"code": 503, "message": "Loading model",
# "type": "unavailable_error"}}.
LLAMA_SERVER = Profile(
    "llama_server",
    accepts=frozenset({"json_schema", "json_object_schema", "json_object", "prompt"}),
    reject_status=400,
    reject_body={
        "error": {
            "code": 400,
            "message": 'response_format type must be one of "text", "json_object" or '
            '"json_schema", but got: {type}',
            "type": "invalid_request_error",
        }
    },
    literal_newlines=True,
    default_max_tokens=4096,
    outage_status=503,
    outage_body={"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}},
)

# Ollama /v1 (docs/openai.md, openai/openai.go): "json_object" becomes format "json",
# "json_schema" becomes format <schema> (>= 0.5.0); other types and extra keys are ignored, never
# rejected. num_predict defaults to -1 (until the context is full). "ollama serve" restarting
# refuses connections.
OLLAMA = Profile(
    "ollama",
    accepts=ALL_FORMS,
    literal_newlines=True,
    default_max_tokens=4096,
    outage="refused",
)

# vLLM OpenAI-compatible server (docs "Structured Outputs", protocol.py ResponseFormat): type in
# text, json_object, json_schema (structural_tag); unknown request keys are ignored with a
# warning, so json_object with "schema" is plain JSON mode. A bad type is a 400
# {"object": "error", "type": "BadRequestError", "code": 400}. max_tokens defaults to
# max_model_len - prompt. The API server binds only after the engine is up: refused meanwhile.
VLLM = Profile(
    "vllm",
    accepts=frozenset({"json_schema", "json_object_schema", "json_object", "prompt"}),
    reject_status=400,
    reject_body={
        "object": "error",
        "message": "1 validation error for ChatCompletionRequest\nresponse_format.type\n  Input "
        "should be 'text', 'json_object', 'json_schema' or 'structural_tag' [input_value='{type}']",
        "type": "BadRequestError",
        "param": None,
        "code": 400,
    },
    default_max_tokens=8192,
    outage="refused",
)

PROFILES: dict[str, Profile] = {
    p.name: p for p in (GENERIC, OPENAI, LLAMA_CPP_PYTHON, LLAMA_SERVER, OLLAMA, VLLM)
}
REAL = ("openai", "llama_cpp_python", "llama_server", "ollama", "vllm")


def form_of(body: dict[str, Any]) -> tuple[Form, str]:
    """The form of a request's ``response_format`` and its ``type``."""
    fmt = body.get("response_format")
    if not fmt:
        return "prompt", "text"
    kind = str(fmt.get("type"))
    if kind == "json_schema" and "json_schema" in fmt:
        return "json_schema", kind
    if kind == "json_object":
        return ("json_object_schema" if "schema" in fmt else "json_object"), kind
    return "other", kind
