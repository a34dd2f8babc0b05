"""Embedders behind the ``Embedder`` protocol."""

from __future__ import annotations

from omoide.config import Settings
from omoide.embed.hashing import HashEmbedder
from omoide.embed.protocol import INT8_SUFFIX, Embedder
from omoide.errors import InvalidInput

__all__ = ["Embedder", "HashEmbedder", "build_embedder", "resolve_runtime"]

# OMOIDE_EMBED_MODEL values for all-MiniLM-L6-v2 with int8 weights (onnx_int8.py)
_INT8 = ("minilm-int8", "all-MiniLM-L6-v2-int8", "all-MiniLM-L6-v2-onnx-int8")


def resolve_runtime(runtime: str, stored_model: str | None) -> str:
    """The local model's runtime for a store whose vectors came from ``stored_model`` (None:
    a new store). ``auto`` gives new stores the int8 runtime (about twice the ingest speed, the
    same recall on held-out LoCoMo) and keeps a store's float vectors float: a runtime switch
    changes the vectors, so it waits for ``omoide reindex``."""
    if runtime != "auto":
        return runtime
    if stored_model is not None and not stored_model.endswith(INT8_SUFFIX):
        return "onnx"
    return "onnx-int8"


def build_embedder(settings: Settings, stored_model: str | None = None) -> Embedder:
    """The embedder the settings ask for, for a store whose vectors came from ``stored_model``
    (None: a new store; see ``resolve_runtime``). Nothing is loaded until the first ``embed``."""
    if settings.embed.embedder == "local" and settings.embed.model in _INT8:
        from omoide.embed.onnx_int8 import Int8Embedder

        return Int8Embedder(settings.embed.threads, settings.embed.batch_size)
    runtime = resolve_runtime(settings.embed.runtime, stored_model)
    if settings.embed.embedder == "local" and runtime in ("onnx", "onnx-int8"):
        from omoide.embed.onnx import OnnxEmbedder

        return OnnxEmbedder(
            settings.embed.model,
            settings.embed.threads,
            settings.embed.batch_size,
            cache_dir=settings.store.models_dir,
            int8=runtime == "onnx-int8",
        )
    if settings.embed.embedder == "local":
        from omoide.embed.local import LocalEmbedder

        return LocalEmbedder(
            settings.embed.model, settings.embed.threads, settings.embed.batch_size
        )
    if settings.embed.embedder == "hash":
        return HashEmbedder()
    if not settings.embed.api_base:
        raise InvalidInput(
            f"OMOIDE_EMBEDDER={settings.embed.embedder} needs OMOIDE_EMBED_API_BASE"
            " (EMBED_API_BASE)"
        )
    from omoide.embed.remote import OllamaEmbedder, OpenAICompatEmbedder

    if settings.embed.embedder == "ollama":
        return OllamaEmbedder(settings.embed.api_base, settings.embed.model)
    key = settings.embed.api_key.get_secret_value() if settings.embed.api_key else None
    return OpenAICompatEmbedder(settings.embed.api_base, settings.embed.model, key)
