"""Embedders over HTTP: any OpenAI-compatible ``/v1/embeddings`` endpoint, and Ollama.

Both are ``omoide.embed.protocol.Remote``: ``check(timeout)`` embeds one short text with its own
timeout, which is how ``/health`` knows the endpoint answers before the first real embed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx
import numpy as np

from omoide.embed.protocol import normalize
from omoide.errors import EmbedderError

CHECK_TEXT = "ping"


class OpenAICompatEmbedder:
    """OpenAI, vLLM, llama.cpp server, LiteLLM, Ollama's ``/v1``... ``base_url`` ends in /v1."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 30.0,
        batch_size: int = 128,
    ) -> None:
        self.name = f"openai-compat/{model}"
        self.model = model
        self.batch_size = batch_size
        self.endpoint = base_url.rstrip("/")
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(base_url=self.endpoint, headers=headers, timeout=timeout)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            out.extend(self._batch(list(texts[start : start + self.batch_size])))
        return normalize(np.array(out, dtype=np.float32))

    def check(self, timeout: float) -> None:
        self._batch([CHECK_TEXT], timeout)

    def _batch(self, batch: list[str], timeout: float | None = None) -> list[Any]:
        payload: dict[str, object] = {"model": self.model, "input": batch}
        body = _post(self._client, "/embeddings", payload, timeout)
        found = body.get("data")
        rows: list[dict[str, Any]] = list(found) if isinstance(found, list) else []
        data = sorted(rows, key=lambda d: int(d.get("index", 0)))
        if len(data) != len(batch):
            raise EmbedderError(f"expected {len(batch)} embeddings, got {len(data)}")
        return [d["embedding"] for d in data]

    def close(self) -> None:
        self._client.close()


class OllamaEmbedder:
    """Ollama's native ``/api/embed`` (``base_url`` like http://localhost:11434)."""

    def __init__(self, base_url: str, model: str, timeout: float = 30.0) -> None:
        self.name = f"ollama/{model}"
        self.model = model
        self.endpoint = base_url.rstrip("/")
        self._client = httpx.Client(base_url=self.endpoint, timeout=timeout)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return normalize(np.array(self._vectors(list(texts)), dtype=np.float32))

    def check(self, timeout: float) -> None:
        self._vectors([CHECK_TEXT], timeout)

    def _vectors(self, texts: list[str], timeout: float | None = None) -> list[Any]:
        body = _post(self._client, "/api/embed", {"model": self.model, "input": texts}, timeout)
        vectors = body.get("embeddings")
        if not isinstance(vectors, list) or len(vectors) != len(texts):
            raise EmbedderError("Ollama returned no embeddings")
        return vectors

    def close(self) -> None:
        self._client.close()


def _post(
    client: httpx.Client, path: str, payload: dict[str, object], timeout: float | None = None
) -> dict[str, object]:
    """``timeout``: this request's, instead of the client's."""
    try:
        if timeout is None:
            response = client.post(path, json=payload)
        else:
            response = client.post(path, json=payload, timeout=timeout)
    except httpx.TimeoutException as exc:
        raise EmbedderError(f"embedding endpoint did not answer in time: {exc}") from exc
    except httpx.HTTPError as exc:
        raise EmbedderError(f"embedding endpoint unreachable: {exc}") from exc
    if response.status_code >= 400:
        retryable = response.status_code == 429 or response.status_code >= 500
        raise EmbedderError(
            f"embedding endpoint answered {response.status_code}: {response.text[:200]}",
            retryable=retryable,
        )
    try:
        body = response.json()
    except ValueError as exc:
        raise EmbedderError("embedding endpoint returned invalid JSON") from exc
    if not isinstance(body, dict):
        raise EmbedderError("embedding endpoint returned an unexpected body")
    return body
