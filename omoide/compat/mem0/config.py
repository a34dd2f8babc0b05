"""``Memory.from_config``: the parts of a mem0 config dict that map onto omoide's settings.

Mapped: ``llm`` (providers ``openai``, ``ollama``, ``lmstudio``, ``vllm``, or any with a
``base_url``: all OpenAI-compatible to omoide), ``embedder`` (``huggingface`` runs the local
model, ``openai`` and ``ollama`` call one) and ``history_db_path`` (omoide's one SQLite file:
memories, vectors and history together). Accepted and not used, with a warning:
``vector_store`` (vectors live in that SQLite file), ``graph_store`` (omoide builds its graph
from the LLM extraction), ``reranker``, ``version`` and the custom prompts. Anything else is an
``InvalidInput`` naming the key.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from omoide.config import Settings
from omoide.errors import InvalidInput

UNUSED = frozenset(
    {
        "vector_store",
        "graph_store",
        "reranker",
        "version",
        "custom_fact_extraction_prompt",
        "custom_update_memory_prompt",
        "custom_prompt",
        "custom_instructions",
    }
)
# Where each provider's OpenAI-compatible endpoint is when the config names none (mem0's own
# defaults for these providers).
_LLM_BASES = {
    "openai": "https://api.openai.com/v1",
    "ollama": "http://localhost:11434/v1",
    "lmstudio": "http://localhost:1234/v1",
    "vllm": "http://localhost:8000/v1",
}


def settings_from_config(config: Mapping[str, Any], base: Settings) -> tuple[Settings, Path | None]:
    """``base`` with what ``config`` sets, and the database path it names (or None)."""
    if not isinstance(config, Mapping):
        raise InvalidInput(f"config: expected a dict, got {type(config).__name__}")
    unknown = sorted(set(config) - UNUSED - {"llm", "embedder", "history_db_path"})
    if unknown:
        raise InvalidInput(f"config: unknown key(s) {', '.join(unknown)}", field="config")
    if unused := sorted(set(config) & UNUSED):
        warnings.warn(f"omoide ignores these mem0 config keys: {', '.join(unused)}", stacklevel=3)
    update: dict[str, Any] = {}
    if "llm" in config:
        update |= _llm(config["llm"])
    if "embedder" in config:
        update |= _embedder(config["embedder"])
    path = config.get("history_db_path")
    if path is not None and not isinstance(path, str | Path):
        raise InvalidInput("config: history_db_path must be a path", field="history_db_path")
    return base.updated(**update), Path(path).expanduser() if path else None


def _section(value: Any, name: str) -> tuple[str, dict[str, Any]]:
    if not isinstance(value, Mapping) or not isinstance(value.get("provider"), str):
        raise InvalidInput(f"config: {name} needs a 'provider' and a 'config' dict", field=name)
    inner = value.get("config") or {}
    if not isinstance(inner, Mapping):
        raise InvalidInput(f"config: {name}.config must be a dict", field=name)
    return value["provider"], dict(inner)


def _base_url(provider: str, inner: dict[str, Any]) -> str | None:
    for key in (f"{provider}_base_url", "base_url", "api_base"):
        if isinstance(inner.get(key), str):
            url: str = inner[key].rstrip("/")
            # mem0's ollama_base_url is the server root; omoide talks to its OpenAI API.
            return f"{url}/v1" if provider == "ollama" and not url.endswith("/v1") else url
    return _LLM_BASES.get(provider)


def _llm(value: Any) -> dict[str, Any]:
    provider, inner = _section(value, "llm")
    base = _base_url(provider, inner)
    if base is None:
        raise InvalidInput(
            f"config: llm provider {provider!r} is not OpenAI-compatible to omoide; use"
            f" {', '.join(sorted(_LLM_BASES))} or give llm.config.base_url",
            field="llm.provider",
        )
    if not isinstance(inner.get("model"), str):
        raise InvalidInput("config: llm.config.model is required", field="llm.config.model")
    update: dict[str, Any] = {"llm_base_url": base, "llm_model": inner["model"]}
    if isinstance(inner.get("api_key"), str):
        update["llm_api_key"] = SecretStr(inner["api_key"])
    return update


def _embedder(value: Any) -> dict[str, Any]:
    provider, inner = _section(value, "embedder")
    kinds = {"huggingface": "local", "openai": "openai", "ollama": "ollama"}
    if provider not in kinds:
        raise InvalidInput(
            f"config: embedder provider {provider!r} is not supported; use huggingface,"
            " openai or ollama",
            field="embedder.provider",
        )
    update: dict[str, Any] = {"embedder": kinds[provider]}
    if isinstance(inner.get("model"), str):
        # mem0's huggingface default names the hub repo; omoide's local model is its last part.
        update["embed_model"] = inner["model"].removeprefix("sentence-transformers/")
    if provider != "huggingface":
        base = _base_url(provider, inner)
        if provider == "ollama" and base:
            base = base.removesuffix("/v1")
        update["embed_api_base"] = base
    if isinstance(inner.get("api_key"), str):
        update["embed_api_key"] = SecretStr(inner["api_key"])
    return update
