"""The chat client for any OpenAI-compatible endpoint: OpenAI, vLLM, llama.cpp, Ollama, LiteLLM.

Structured output is negotiated, not assumed: the client asks for ``json_schema``; a server that
answers 400 naming the parameter gets ``json_object`` next, then plain prompting with the schema
in the system message. The downgrade sticks for the life of the client, so it costs one request.

No request is retried after an outage: the error says ``retryable`` and the durable job that made
the call decides when to try again (a sleeping retry here would hold a worker and hide outages).
The only second request is the repair of an unparseable answer, which is not an outage.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

import openai
from pydantic import BaseModel, Field, ValidationError

from omoide.errors import LLMError
from omoide.llm.parse import ParseError, parse_model
from omoide.llm.protocol import Completion, T, Usage

log = logging.getLogger(__name__)

ResponseFormat: TypeAlias = Literal["json_schema", "json_object", "prompt"]
_FALLBACK: dict[str, ResponseFormat] = {"json_schema": "json_object", "json_object": "prompt"}
_FORMAT_WORDS = ("response_format", "json_schema", "json_object", "structured output")
_SCHEMA_HINT = (
    "\n\nReply with one JSON object and nothing else (no prose, no markdown), "
    "valid against this JSON Schema:\n{schema}"
)
_REPAIR = (
    "Your previous reply could not be used: {error}\n"
    "Reply again with only the corrected JSON object, no prose and no markdown."
)


class OpenAICompatLLM:
    """An ``LLM`` over ``POST {base_url}/chat/completions`` with the official ``openai`` SDK.

        >>> llm = OpenAICompatLLM("http://localhost:11434/v1", "qwen2.5:3b", timeout=30)
        >>> llm.complete_json("Extract facts as JSON.", "I like tea", FactsResponse).value

    ``max_retries`` is passed to the SDK and defaults to 0 on purpose (see the module docstring).
    ``temperature=None`` leaves it out, for reasoning models that reject it.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 0,
        temperature: float | None = 0.0,
        response_format: ResponseFormat = "json_schema",
    ) -> None:
        self.name = f"openai-compat/{model}"
        self.model = model
        self.temperature = temperature
        self.response_format: ResponseFormat = response_format
        self._client = openai.OpenAI(
            base_url=base_url, api_key=api_key or "none", timeout=timeout, max_retries=max_retries
        )

    def complete_json(self, system: str, user: str, schema: type[T]) -> Completion[T]:
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        first = self._chat(messages, schema, Usage())
        value, error = _try_parse(first.text, schema)
        if value is not None:
            return Completion(value, first.usage, first.text, self.model)
        repair = [
            *messages,
            {"role": "assistant", "content": first.text},
            {"role": "user", "content": _REPAIR.format(error=error)},
        ]
        second = self._chat(repair, schema, first.usage)
        usage = first.usage + second.usage
        value, error = _try_parse(second.text, schema)
        if value is None:
            raise LLMError(
                f"{self.name} gave no valid {schema.__name__} even after a repair request "
                f"({error}; finish_reason={second.finish_reason})",
                retryable=False,
                raw=first.text,
                repair_raw=second.text,
                usage=usage,
            )
        return Completion(value, usage, second.text, self.model)

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> OpenAICompatLLM:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _chat(
        self, messages: list[dict[str, str]], schema: type[BaseModel], spent: Usage
    ) -> _Reply:
        while True:
            fmt = self.response_format
            try:
                return self._request(messages, schema, fmt)
            except openai.BadRequestError as exc:
                if fmt not in _FALLBACK or not _rejects_format(exc):
                    raise _llm_error(exc, spent) from exc
                log.warning(
                    "%s rejected response_format %s; using %s", self.name, fmt, _FALLBACK[fmt]
                )
                self.response_format = _FALLBACK[fmt]
            except openai.OpenAIError as exc:
                raise _llm_error(exc, spent) from exc
            except LLMError as exc:
                exc.fields["usage"] = spent
                raise

    def _request(
        self, messages: list[dict[str, str]], schema: type[BaseModel], fmt: ResponseFormat
    ) -> _Reply:
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages}
        if self.temperature is not None:
            kwargs["temperature"] = self.temperature
        if fmt == "json_schema":
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema.__name__, "schema": schema.model_json_schema()},
            }
        else:
            kwargs["messages"] = _with_schema_hint(messages, schema)
        if fmt == "json_object":
            kwargs["response_format"] = {"type": "json_object"}
        raw = self._client.chat.completions.with_raw_response.create(**kwargs)
        return _read_reply(raw.http_response.text)


@dataclass(frozen=True)
class _Reply:
    text: str
    usage: Usage
    finish_reason: str | None


class _Message(BaseModel):
    content: str | None = None


class _Choice(BaseModel):
    message: _Message
    finish_reason: str | None = None


class _TokenUsage(BaseModel):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class _Envelope(BaseModel):
    """The part of an OpenAI chat completion body this client relies on."""

    choices: list[_Choice] = Field(min_length=1)
    usage: _TokenUsage | None = None


def _read_reply(body: str) -> _Reply:
    # Parsed here rather than by the SDK, which returns a bare str for a non-JSON content type
    # and unvalidated objects for a foreign shape.
    try:
        envelope = _Envelope.model_validate_json(body)
    except ValidationError as exc:
        # A gateway's HTML error page or a truncated body: a fault on the way, worth retrying.
        raise LLMError(
            f"the LLM endpoint returned a malformed response: {body[:200]!r}",
            retryable=True,
            raw=body,
        ) from exc
    choice = envelope.choices[0]
    tokens = envelope.usage or _TokenUsage()
    usage = Usage(tokens.prompt_tokens or 0, tokens.completion_tokens or 0, 1)
    return _Reply(choice.message.content or "", usage, choice.finish_reason)


def _try_parse(text: str, schema: type[T]) -> tuple[T | None, str]:
    try:
        return parse_model(text, schema), ""
    except ParseError as exc:
        return None, str(exc)


def _with_schema_hint(
    messages: list[dict[str, str]], schema: type[BaseModel]
) -> list[dict[str, str]]:
    hint = _SCHEMA_HINT.format(schema=json.dumps(schema.model_json_schema(), separators=(",", ":")))
    system, *rest = messages
    return [{**system, "content": system["content"] + hint}, *rest]


def _rejects_format(exc: openai.BadRequestError) -> bool:
    text = f"{exc.message} {exc.body}".lower()
    return any(word in text for word in _FORMAT_WORDS)


def _llm_error(exc: openai.OpenAIError, spent: Usage) -> LLMError:
    if isinstance(exc, openai.APITimeoutError):
        return LLMError("the LLM endpoint timed out", retryable=True, usage=spent)
    if isinstance(exc, openai.APIConnectionError):
        return LLMError(f"the LLM endpoint is unreachable: {exc}", retryable=True, usage=spent)
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        return LLMError(
            f"the LLM endpoint answered HTTP {status}: {exc.message[:300]}",
            retryable=status in (408, 409, 429) or status >= 500,
            status=status,
            usage=spent,
        )
    return LLMError(f"the LLM call failed: {exc}", retryable=True, usage=spent)
