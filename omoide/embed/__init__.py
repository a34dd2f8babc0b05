"""Embedders behind the ``Embedder`` protocol."""

from __future__ import annotations

from omoide.config import Settings
from omoide.embed.hashing import HashEmbedder
from omoide.embed.protocol import Embedder
from omoide.errors import InvalidInput

__all__ = ["Embedder", "HashEmbedder", "build_embedder"]

# OMOIDE_EMBED_MODEL values for all-MiniLM-L6-v2 with int8 weights (onnx_int8.py)
_INT8 = ("minilm-int8", "all-MiniLM-L6-v2-int8", "all-MiniLM-L6-v2-onnx-int8")


def build_embedder(settings: Settings) -> Embedder:
    """The embedder the settings ask for. Nothing is loaded until the first ``embed``."""
    if settings.embedder == "local" and settings.embed_model in _INT8:
        from omoide.embed.onnx_int8 import Int8Embedder

        return Int8Embedder(settings.embed_threads, settings.embed_batch_size)
    if settings.embedder == "local" and settings.embed_runtime in ("onnx", "onnx-int8"):
        from omoide.embed.onnx import OnnxEmbedder

        return OnnxEmbedder(
            settings.embed_model,
            settings.embed_threads,
            settings.embed_batch_size,
            cache_dir=settings.models_dir,
            int8=settings.embed_runtime == "onnx-int8",
        )
    if settings.embedder == "local":
        from omoide.embed.local import LocalEmbedder

        return LocalEmbedder(
            settings.embed_model, settings.embed_threads, settings.embed_batch_size
        )
    if settings.embedder == "hash":
        return HashEmbedder()
    if not settings.embed_api_base:
        raise InvalidInput(
            f"OMOIDE_EMBEDDER={settings.embedder} needs OMOIDE_EMBED_API_BASE (EMBED_API_BASE)"
        )
    from omoide.embed.remote import OllamaEmbedder, OpenAICompatEmbedder

    if settings.embedder == "ollama":
        return OllamaEmbedder(settings.embed_api_base, settings.embed_model)
    key = settings.embed_api_key.get_secret_value() if settings.embed_api_key else None
    return OpenAICompatEmbedder(settings.embed_api_base, settings.embed_model, key)
