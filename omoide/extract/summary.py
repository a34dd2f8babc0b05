"""Cumulative summaries: the previous summary plus new messages give the next one."""

from __future__ import annotations

from collections.abc import Sequence

from omoide.errors import InvalidInput
from omoide.extract._common import collapse, has_content, is_placeholder, unusable
from omoide.llm.prompts import summary as summary_prompt
from omoide.llm.protocol import LLM
from omoide.types import Message


def summarize(
    llm: LLM, messages: Sequence[Message], previous: str | None = None, max_words: int = 300
) -> str:
    """The summary of ``previous`` followed by ``messages``.

    Without new text the previous summary is returned unchanged and no call is made; with
    neither, ``InvalidInput``. An empty or placeholder summary, or the prompt's example, is an
    ``LLMError``, since storing it would erase the previous one.

        >>> summarize(llm, [Message(content="Let's meet Friday")], previous="Planning a trip.")
        'Planning a trip; meeting set for Friday.'
    """
    if not has_content(messages):
        if previous:
            return previous
        raise InvalidInput("summarize: no messages and no previous summary")
    done = summary_prompt.build(messages, previous, max_words).run(llm)
    text = done.value.summary.strip()
    if not text:
        raise unusable("empty summary", done)
    if is_placeholder(text):
        raise unusable(f"the summary is a placeholder ({text[:40]!r})", done)
    if collapse(text).casefold() == collapse(_EXAMPLE).casefold():
        raise unusable("the summary repeats the prompt's example", done)
    text = _without_example(text, messages)
    if not text or is_placeholder(text):
        raise unusable("the summary is the prompt's example and nothing else", done)
    return text


def _without_example(text: str, said: Sequence[Message]) -> str:
    """``text`` without the prompt's example sentence that a small model put before its own
    summary (seen with SmolLM2-135M), unless the new messages say it (a previous summary does
    not count: it may hold an earlier echo)."""
    folded, example = collapse(text), collapse(_EXAMPLE)
    start = folded.casefold().find(example.casefold())
    if start < 0 or any(example.casefold() in collapse(m.content).casefold() for m in said):
        return text
    return collapse(folded[:start] + folded[start + len(example) :])


_EXAMPLE = summary_prompt.SummaryResponse.EXAMPLE["summary"]
