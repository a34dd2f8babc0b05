"""The chat client for any OpenAI-compatible endpoint: OpenAI, vLLM, llama.cpp, Ollama, LiteLLM.

Structured output is negotiated, not assumed (``omoide.llm.formats``): the client asks for
``json_schema``; a server whose error body refuses the ``response_format`` (HTTP 400, 422 or
500) gets ``json_object`` with the schema next, then plain ``json_object``, then prompting with
a filled example object in the system message. What works is remembered per endpoint, so the
fallback costs one request per form; ``response_format=`` other than "auto" forces one form.

Every request carries ``max_tokens``: the response model's ``MAX_TOKENS`` (plus
``thinking_tokens`` for reasoning models), capped by ``max_tokens``; an endpoint that refuses
the field for ``max_completion_tokens`` (OpenAI's reasoning models) gets that from then on. A
server left without a cap generates until its context is full, long after the client has given
up. A reply cut at the budget (``finish_reason="length"``) that holds no complete answer raises
``LLMTruncated``, not a parse error, and gets no repair request (it would run into the same
wall).

No request is retried after an outage: the error (``LLMUnavailable``) is retryable and the
durable job that made the call decides when to try again (a sleeping retry here would hold a
worker and hide outages). The only second request is the repair of an unparseable answer.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any, ClassVar

import openai
from pydantic import BaseModel, Field, ValidationError

from omoide.errors import LLMError
from omoide.llm import formats
from omoide.llm.errors import LLMRejected, LLMTruncated, LLMUnavailable, bad_answer
from omoide.llm.formats import FormatMemory, FormatSetting, ResponseFormat
from omoide.llm.parse import ParseError, parse_model, salvage_truncated
from omoide.llm.probe import probe
from omoide.llm.protocol import Completion, T, Usage
from omoide.observe import NO_OBSERVER, Observer

log = logging.getLogger(__name__)

DEFAULT_MAX_TOKENS = 1024  # for a response model that declares no MAX_TOKENS
_REPAIR = (
    "Your previous reply could not be used: {error}\n"
    "Reply again with only the corrected JSON object, no prose and no markdown."
)


class Probe(BaseModel):
    """The answer of ``OpenAICompatLLM.probe``."""

    EXAMPLE: ClassVar[dict[str, Any]] = {"ok": True}
    MAX_TOKENS: ClassVar[int] = 16

    ok: bool


class OpenAICompatLLM:
    """An ``LLM`` over ``POST {base_url}/chat/completions`` with the official ``openai`` SDK.

        >>> llm = OpenAICompatLLM("http://localhost:11434/v1", "qwen2.5:3b", timeout=30)
        >>> llm.complete_json("Extract facts as JSON.", "I like tea", FactsResponse).value

    ``max_retries`` is passed to the SDK and defaults to 0 on purpose (see the module docstring).
    ``temperature=None`` leaves it out, for reasoning models that reject it. ``formats`` is where
    the negotiated format is kept (one per client unless given; ``build_llm`` shares one).
    ``observer`` hears of every HTTP request: its time and, when it failed, the error's class.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 0,
        temperature: float | None = 0.0,
        response_format: FormatSetting = "auto",
        max_tokens: int = 4096,
        thinking_tokens: int = 0,
        formats: FormatMemory | None = None,
        observer: Observer = NO_OBSERVER,
    ) -> None:
        self.name = f"openai-compat/{model}"
        self.model = model
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.thinking_tokens = thinking_tokens
        self._forced: ResponseFormat | None = None if response_format == "auto" else response_format
        self._formats = formats or FormatMemory()
        self._observer = observer
        self._endpoint = (base_url.rstrip("/"), model)
        self._api_key = api_key
        self._client = openai.OpenAI(
            base_url=base_url, api_key=api_key or "none", timeout=timeout, max_retries=max_retries
        )

    @property
    def response_format(self) -> ResponseFormat:
        """The form the next request will use."""
        return self._forced or self._formats.current(self._endpoint)

    def budget(self, schema: type[BaseModel]) -> int:
        """The ``max_tokens`` of a request for ``schema``."""
        wanted = getattr(schema, "MAX_TOKENS", DEFAULT_MAX_TOKENS) + self.thinking_tokens
        return max(1, min(wanted, self.max_tokens))

    def complete_json(self, system: str, user: str, schema: type[T]) -> Completion[T]:
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        first = self._chat(messages, schema, Usage())
        value, error = _try_parse(first.text, schema)
        if value is not None:
            # Also when cut at the budget: a complete answer followed by rambling is an answer.
            return Completion(value, first.usage, first.text, self.model)
        if first.finish_reason == "length":
            raise self._truncated(first, schema, Usage())
        repair = [
            *messages,
            {"role": "assistant", "content": first.text},
            {"role": "user", "content": _REPAIR.format(error=error)},
        ]
        second = self._chat(repair, schema, first.usage)
        usage = first.usage + second.usage
        value, error = _try_parse(second.text, schema)
        if value is None and second.finish_reason == "length":
            raise self._truncated(second, schema, first.usage)
        if value is None:
            raise bad_answer(
                f"{self.name} gave no valid {schema.__name__} even after a repair request "
                f"({error}; finish_reason={second.finish_reason})",
                raw=first.text,
                repair_raw=second.text,
                usage=usage,
            )
        return Completion(value, usage, second.text, self.model)

    def probe(self) -> ResponseFormat:
        """Ask for a one-field answer; the response format the endpoint took. Raises the errors
        of ``complete_json`` (``LLMUnavailable`` when it is down): a real health check."""
        self.complete_json("Answer with JSON.", 'Reply with {"ok": true}.', Probe)
        return self.response_format

    def available(self, timeout: float = 5.0) -> bool:
        """Whether the endpoint answers its model list (no tokens spent): the outage gate's
        probe (``omoide.jobs.gate``)."""
        base_url, model = self._endpoint
        return bool(probe(base_url, model, self._api_key, timeout)["status"] == "ok")

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
                reply = self._request(messages, schema, fmt)
            except openai.APIStatusError as exc:
                body = exc.response.text
                if formats.refuses_max_tokens(
                    exc.status_code, body
                ) and self._formats.use_completion_tokens(self._endpoint):
                    continue
                if not formats.rejects_format(exc.status_code, body):
                    raise _llm_error(exc, spent) from exc
                if not self._downgrade(fmt, exc):
                    raise _rejected(exc, fmt, spent, forced=self._forced is not None) from exc
                continue
            except openai.OpenAIError as exc:
                raise _llm_error(exc, spent) from exc
            except LLMError as exc:
                exc.fields["usage"] = spent
                raise
            self._formats.confirm(self._endpoint, fmt)
            return reply

    def _downgrade(self, fmt: ResponseFormat, exc: openai.APIStatusError) -> bool:
        if self._forced is not None:
            return False
        following = self._formats.downgrade(self._endpoint, fmt)
        if following is None:
            return False
        log.warning(
            "%s rejected response_format %s (HTTP %s: %s); using %s",
            self.name, fmt, exc.status_code, exc.response.text[:200], following,
        )  # fmt: skip
        return True

    def _request(
        self, messages: list[dict[str, str]], schema: type[BaseModel], fmt: ResponseFormat
    ) -> _Reply:
        system, *rest = messages
        hinted = {**system, "content": formats.with_example_hint(system["content"], fmt, schema)}
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": [hinted, *rest],
            self._formats.budget_field(self._endpoint): self.budget(schema),
            **formats.request_fields(fmt, schema),
        }
        if self.temperature is not None:
            kwargs["temperature"] = self.temperature
        started = time.perf_counter()
        try:
            raw = self._client.chat.completions.with_raw_response.create(**kwargs)
            reply = _read_reply(raw.http_response.text)
        except Exception as exc:
            self._observer.llm_call(time.perf_counter() - started, type(exc).__name__)
            raise
        self._observer.llm_call(time.perf_counter() - started, None)
        return reply

    def _truncated(self, reply: _Reply, schema: type[BaseModel], spent: Usage) -> LLMTruncated:
        budget = self.budget(schema)
        return LLMTruncated(
            f"{self.name} used its whole output budget (max_tokens={budget}, "
            f"finish_reason=length) before finishing a {schema.__name__}: the model ran on; "
            "raise OMOIDE_LLM_MAX_TOKENS (or OMOIDE_LLM_THINKING_TOKENS for a reasoning model) "
            "if the answer was merely long",
            max_tokens=budget,
            raw=reply.text,
            partial=salvage_truncated(reply.text, schema),
            usage=spent + reply.usage,
        )


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
        raise LLMUnavailable(
            f"the LLM endpoint returned a malformed response: {body[:200]!r}",
            reason="malformed_response",
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


def _rejected(
    exc: openai.APIStatusError, fmt: ResponseFormat, spent: Usage, *, forced: bool
) -> LLMRejected:
    why = "forced by OMOIDE_LLM_RESPONSE_FORMAT" if forced else "the last form left"
    return LLMRejected(
        f"the LLM endpoint rejected response_format {fmt} ({why}): HTTP {exc.status_code} "
        f"{exc.response.text[:300]}",
        status=exc.status_code,
        response_format=fmt,
        usage=spent,
    )


def _llm_error(exc: openai.OpenAIError, spent: Usage) -> LLMError:
    if isinstance(exc, openai.APITimeoutError):
        return LLMUnavailable("the LLM endpoint timed out", reason="timeout", usage=spent)
    if isinstance(exc, openai.APIConnectionError):
        return LLMUnavailable(
            f"the LLM endpoint is unreachable: {exc}", reason="unreachable", usage=spent
        )
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        message = f"the LLM endpoint answered HTTP {status}: {exc.message[:300]}"
        if status in (408, 409, 429) or status >= 500:
            reason = {429: "rate_limited", 503: "overloaded"}.get(status, "server_error")
            return LLMUnavailable(message, reason=reason, status=status, usage=spent)
        return LLMRejected(message, status=status, usage=spent)
    return LLMUnavailable(f"the LLM call failed: {exc}", reason="server_error", usage=spent)
