"""The LLM layer: the ``LLM`` protocol, an OpenAI-compatible client, and one prompt per task.

Optional by design: without ``OMOIDE_LLM_BASE_URL`` there is no LLM and the extraction features
report themselves disabled. The ``openai`` SDK is imported only when a client is built.

    >>> llm = build_llm(settings)          # None when no LLM is configured
    >>> if llm is not None:
    ...     facts = extract_facts(MeteredLLM(llm), messages)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from omoide.config import Settings
from omoide.errors import FeatureDisabled, InvalidInput
from omoide.llm.errors import LLMRejected, LLMTruncated, LLMUnavailable, kind_of
from omoide.llm.protocol import LLM, Completion, MeteredLLM, Usage
from omoide.observe import NO_OBSERVER, Observer

if TYPE_CHECKING:
    from omoide.llm.client import OpenAICompatLLM

__all__ = [
    "LLM",
    "Completion",
    "LLMRejected",
    "LLMTruncated",
    "LLMUnavailable",
    "MeteredLLM",
    "Usage",
    "build_llm",
    "kind_of",
    "require_llm",
]


def build_llm(
    settings: Settings, timeout: float = 60.0, observer: Observer = NO_OBSERVER
) -> OpenAICompatLLM | None:
    """The configured LLM, or None when ``llm_base_url`` is unset.

    Every provider (``llm_provider``: openai, ollama, vllm, ...) is reached through its
    OpenAI-compatible ``/v1`` endpoint, so the provider name selects nothing yet. Clients built
    here share one ``FormatMemory``: an endpoint's response format is negotiated once a process.
    """
    if not settings.llm.base_url:
        return None
    if not settings.llm.model:
        raise InvalidInput("OMOIDE_LLM_BASE_URL is set but OMOIDE_LLM_MODEL (MODEL_NAME) is not")
    try:
        from omoide.llm.client import OpenAICompatLLM
    except ImportError as exc:
        raise FeatureDisabled(
            "LLM features need the openai package: pip install 'openai>=1.40'"
        ) from exc
    from omoide.llm.formats import SHARED

    key = settings.llm.api_key.get_secret_value() if settings.llm.api_key else None
    return OpenAICompatLLM(
        settings.llm.base_url,
        settings.llm.model,
        key,
        timeout=timeout,
        response_format=settings.llm.response_format,
        max_tokens=settings.llm.max_tokens,
        thinking_tokens=settings.llm.thinking_tokens,
        formats=SHARED,
        observer=observer,
    )


def require_llm(llm: LLM | None, feature: str) -> LLM:
    """``llm``, or ``FeatureDisabled`` naming the feature that needs one."""
    if llm is None:
        raise FeatureDisabled(
            f"{feature} needs an LLM: set OMOIDE_LLM_BASE_URL and OMOIDE_LLM_MODEL"
        )
    return llm
