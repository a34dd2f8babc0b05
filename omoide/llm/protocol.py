"""The LLM seam: one method that turns a prompt into a validated pydantic object.

Token usage comes back with every call (``Completion.usage``) instead of accumulating on the
client, because one client is shared by every worker thread and every tenant: a counter on the
client could not say whose tokens it counted. ``MeteredLLM`` sums the usage of a sequence of calls
(one job, one tenant) without sharing state.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from pydantic import BaseModel

from omoide.errors import LLMError

T = TypeVar("T", bound=BaseModel)


@dataclass(frozen=True)
class Usage:
    """Tokens spent on one or more HTTP calls, as the endpoint reported them.

        >>> Usage(10, 5, 1) + Usage(3, 2, 1)
        Usage(prompt_tokens=13, completion_tokens=7, requests=2)

    Endpoints that report no usage count as zero tokens, but still as a request.
    """

    prompt_tokens: int = 0
    completion_tokens: int = 0
    requests: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.requests + other.requests,
        )

    def as_dict(self) -> dict[str, int]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
            "requests": self.requests,
        }


@dataclass(frozen=True)
class Completion(Generic[T]):
    """A validated answer, the text it was parsed from, and what it cost.

    ``usage`` covers every request the answer took, including a format fallback and a repair.
    """

    value: T
    usage: Usage
    raw: str
    model: str


class LLM(Protocol):
    """A chat model that answers with JSON matching a pydantic model.

    Implementations raise ``LLMError``: ``retryable=True`` for outages (HTTP 429/5xx, timeouts,
    refused connections), ``retryable=False`` when the model's answer cannot be parsed even
    after a repair request (``omoide.llm.errors`` has the subclasses and ``kind_of``, which tell
    an outage from a truncated or bad answer and from a refused request). The error's ``fields``
    hold ``raw`` (the unusable text) and ``usage`` (a ``Usage``, since failed calls cost tokens
    too). A parse failure is never an empty answer.

        >>> class Facts(BaseModel):
        ...     facts: list[str]
        >>> done = llm.complete_json("Extract facts as JSON.", "I like jasmine tea", Facts)
        >>> done.value.facts, done.usage.total_tokens
        (['The user likes jasmine tea'], 57)
    """

    name: str

    def complete_json(self, system: str, user: str, schema: type[T]) -> Completion[T]: ...


class MeteredLLM:
    """Wraps an LLM and adds up the usage of every call made through it, failed ones included.

    Make one per job so the total belongs to one tenant, then add it to that tenant's counter:

        >>> metered = MeteredLLM(llm)
        >>> facts = extract_facts(metered, messages)
        >>> ops = reconcile(metered, facts, existing)
        >>> store.add_tokens(scope, metered.usage)

    Not thread-safe: one instance per job, not per process.
    """

    def __init__(self, llm: LLM) -> None:
        self.name = llm.name
        self.usage = Usage()
        self._llm = llm

    def complete_json(self, system: str, user: str, schema: type[T]) -> Completion[T]:
        try:
            done = self._llm.complete_json(system, user, schema)
        except LLMError as exc:
            spent = exc.fields.get("usage")
            if isinstance(spent, Usage):
                self.usage += spent
            raise
        self.usage += done.usage
        return done
