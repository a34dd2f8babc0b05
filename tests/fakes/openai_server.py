"""A fake OpenAI-compatible server on a real socket, for testing the real HTTP client.

Chat replies are scripted (FIFO) and faults injected per request; every request body is
recorded. Embeddings are deterministic hash vectors, so equal texts get equal vectors.

A ``profile`` (``tests/fakes/profiles.py``) makes it behave like one real server: which
``response_format`` forms it takes and how it refuses the others (status and body), raw
newlines inside JSON strings, generation up to ``max_tokens`` (``finish_reason="length"``), and
what an outage looks like. Outages are driven by the test, never by time: ``outage(calls=2)``
fails the next two chat calls the way the profile's server does (503), ``down()`` stops
listening (connection refused) until the block ends.

    with FakeLLMServer(profile="llama_cpp_python") as server:
        server.enqueue('{"facts": ["The user likes tea"]}')
        server.enqueue_fault("http_429")
        server.enqueue_runaway('{"summary": "', "and then ")
        llm = OpenAICompatLLM(server.url, "fake-model")
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import re
import socket
import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.fakes.profiles import PROFILES, Profile, form_of

FaultKind: TypeAlias = Literal["http_429", "http_500", "hang", "malformed", "malformed_shape"]
Endpoint: TypeAlias = Literal["chat", "embeddings"]


@dataclass(frozen=True)
class _Reply:
    content: str | None = None
    fault: FaultKind | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    runaway: tuple[str, str] | None = None  # (start, unit repeated until the token budget)


_WORD = re.compile(r"\S+")


class FakeLLMServer:
    """Serves ``POST /v1/chat/completions``, ``POST /v1/embeddings`` and ``GET /v1/models`` on
    127.0.0.1.

    ``reject_formats`` holds ``response_format`` types answered with HTTP 400 the way servers
    without structured output do, without consuming a scripted reply; the profile's own
    rejections do not consume one either. With nothing scripted, chat answers HTTP 500 "no
    scripted reply", so a test that calls more than it planned fails loudly. Tokens are words.
    """

    def __init__(
        self,
        embedding_dim: int = 16,
        hang_seconds: float = 10.0,
        model: str = "fake-model",
        profile: str | Profile = "generic",
    ) -> None:
        self.embedding_dim = embedding_dim
        self.hang_seconds = hang_seconds
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self.embedding_requests: list[dict[str, Any]] = []
        self.reject_formats: set[str] = set()
        self.profile = PROFILES[profile] if isinstance(profile, str) else profile
        self._outage_calls = 0
        self._queues: dict[Endpoint, deque[_Reply]] = {"chat": deque(), "embeddings": deque()}
        self._stopping = threading.Event()
        self._released = threading.Event()
        self._released.set()
        self.held = 0  # chat requests waiting at a ``hold()`` right now
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def enqueue(
        self, content: str, prompt_tokens: int | None = None, completion_tokens: int | None = None
    ) -> None:
        """Script the next chat reply; token counts default to word counts."""
        self._queues["chat"].append(_Reply(content, None, prompt_tokens, completion_tokens))

    def enqueue_fault(self, kind: FaultKind, endpoint: Endpoint = "chat") -> None:
        self._queues[endpoint].append(_Reply(fault=kind))

    def enqueue_runaway(self, start: str, unit: str = "and so on ") -> None:
        """A model that never stops: ``start`` then ``unit`` again and again, until the request's
        ``max_tokens`` (or, without one, the profile's context) is used up."""
        self._queues["chat"].append(_Reply(runaway=(start, unit)))

    def outage(self, calls: int) -> None:
        """The next ``calls`` chat requests fail like the profile's server when it is loading or
        overloaded (HTTP 503 with its body), without consuming scripted replies."""
        self._outage_calls = calls

    @contextmanager
    def down(self) -> Iterator[None]:
        """Nothing listens on the port inside the block (connection refused), as while a
        server restarts; the same port serves again afterwards."""
        self.stop()
        try:
            yield
        finally:
            self.start(self.port)

    @contextmanager
    def hold(self) -> Iterator[None]:
        """A slow model: chat requests wait inside the block and are answered (from the
        script) once it ends. ``held`` counts the waiting ones."""
        self._released.clear()
        try:
            yield
        finally:
            self._released.set()

    def use(self, profile: str | Profile) -> None:
        self.profile = PROFILES[profile] if isinstance(profile, str) else profile

    def reset(self) -> None:
        for queue in self._queues.values():
            queue.clear()
        self.requests.clear()
        self.embedding_requests.clear()
        self.reject_formats.clear()
        self.profile = PROFILES["generic"]
        self._outage_calls = 0

    def start(self, port: int = 0) -> FakeLLMServer:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self._app(), log_level="warning", lifespan="off", ws="none", http="h11"
        )
        self._server = uvicorn.Server(config)
        self._stopping.clear()
        self._thread = threading.Thread(target=self._server.run, args=([sock],), daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the fake LLM server did not start")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        self._stopping.set()  # releases hanging handlers so shutdown does not wait for them
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(timeout=10)
        self._server = self._thread = None

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/v1/chat/completions", self._chat, methods=["POST"]),
                Route("/v1/embeddings", self._embeddings, methods=["POST"]),
                Route("/v1/models", self._models, methods=["GET"]),
            ]
        )

    async def _models(self, _request: Request) -> Response:
        """The model list, for clients that check the server is there (``omoide doctor``)."""
        model = {"id": self.model, "object": "model", "created": 0, "owned_by": "fake"}
        return JSONResponse({"object": "list", "data": [model]})

    async def _chat(self, request: Request) -> Response:
        body = await request.json()
        self.requests.append(body)
        self.held += 1
        try:
            while not self._released.is_set() and not self._stopping.is_set():
                await asyncio.sleep(0.01)
        finally:
            self.held -= 1
        refusal = self._refusal(body)
        if refusal is not None:
            return refusal
        reply = _pop(self._queues["chat"])
        if reply is None:
            return _error(500, "FakeLLMServer: no scripted reply left")
        if reply.fault is not None:
            return await self._fault(reply.fault)
        return JSONResponse(self._completion(body, reply))

    def _refusal(self, body: dict[str, Any]) -> Response | None:
        """The answer of a server that does not get to generate: outage or refused format."""
        form, kind = form_of(body)
        if kind in self.reject_formats:
            return _error(400, f"response_format type '{kind}' is not supported by this server")
        profile = self.profile
        if self._outage_calls > 0:
            self._outage_calls -= 1
            default = {"error": {"message": "Service Unavailable", "type": "server_error"}}
            return _json(profile.outage_status, profile.outage_body or default)
        if form not in profile.accepts:
            return _json(profile.reject_status, profile.rejection(form, kind))
        if profile.completion_tokens_only and "max_tokens" in body:
            message = (
                "Unsupported parameter: 'max_tokens' is not supported with this model. "
                "Use 'max_completion_tokens' instead."
            )
            return _json(400, {"error": {"message": message, "type": "invalid_request_error"}})
        said = " ".join(str(m.get("content", "")) for m in body.get("messages", []))
        if profile.json_word_required and kind == "json_object" and "json" not in said.lower():
            message = (
                "'messages' must contain the word 'json' in some form, to use "
                "'response_format' of type 'json_object'."
            )
            return _json(400, {"error": {"message": message, "type": "invalid_request_error"}})
        return None

    async def _embeddings(self, request: Request) -> Response:
        body = await request.json()
        self.embedding_requests.append(body)
        fault = _pop(self._queues["embeddings"])
        if fault is not None and fault.fault is not None:
            return await self._fault(fault.fault)
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = [
            {"object": "embedding", "index": i, "embedding": hash_vector(t, self.embedding_dim)}
            for i, t in enumerate(texts)
        ]
        tokens = sum(_words(t) for t in texts)
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        return JSONResponse({"object": "list", "data": data, "model": self.model, "usage": usage})

    async def _fault(self, kind: FaultKind) -> Response:
        if kind == "http_429":
            return _error(429, "Rate limit reached", headers={"retry-after": "1"})
        if kind == "http_500":
            return _error(500, "The server had an error while processing your request")
        if kind == "malformed":
            return Response('{"id": "chatcmpl-1", "choices": [', media_type="application/json")
        if kind == "malformed_shape":
            return JSONResponse({"result": "ok", "output": "not an OpenAI body"})
        deadline = time.monotonic() + self.hang_seconds
        while not self._stopping.is_set() and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        return _error(504, "FakeLLMServer: hung")

    def _completion(self, body: dict[str, Any], reply: _Reply) -> dict[str, Any]:
        asked = body.get("max_tokens") or body.get("max_completion_tokens")
        budget = asked or self.profile.default_max_tokens
        content = reply.content or ""
        if reply.runaway is not None:
            start, unit = reply.runaway
            content = start + unit * (budget // max(1, _words(unit)) + 1)
        if self.profile.literal_newlines:
            content = content.replace("\\n", "\n")
        finish = "stop"
        if _words(content) > budget:
            content, finish = _first_words(content, budget), "length"
        prompt = sum(_words(str(m.get("content", ""))) for m in body.get("messages", []))
        prompt_tokens = prompt if reply.prompt_tokens is None else reply.prompt_tokens
        completion = _words(content) if reply.completion_tokens is None else reply.completion_tokens
        return {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", self.model),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": finish,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion,
                "total_tokens": prompt_tokens + completion,
            },
        }


def hash_vector(text: str, dim: int) -> list[float]:
    """A deterministic unit vector for ``text``: sha256 in counter mode, mapped to [-1, 1]."""
    values: list[float] = []
    counter = 0
    while len(values) < dim:
        digest = hashlib.sha256(f"{counter}:{text}".encode()).digest()
        values.extend(b / 127.5 - 1.0 for b in digest)
        counter += 1
    norm = math.sqrt(sum(v * v for v in values[:dim])) or 1.0
    return [v / norm for v in values[:dim]]


def _pop(queue: deque[_Reply]) -> _Reply | None:
    try:
        return queue.popleft()
    except IndexError:
        return None


def _words(text: str) -> int:
    return len(text.split())


def _first_words(text: str, count: int) -> str:
    """``text`` up to the end of its ``count``-th word, spacing kept."""
    for i, match in enumerate(_WORD.finditer(text), 1):
        if i == count:
            return text[: match.end()]
    return text


def _json(status: int, body: dict[str, Any]) -> Response:
    return Response(json.dumps(body), status, media_type="application/json")


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    body = {"error": {"message": message, "type": "fake_error", "param": None, "code": None}}
    return Response(json.dumps(body), status, headers, media_type="application/json")
