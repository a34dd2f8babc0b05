"""Facts: extract candidates from a conversation, then reconcile them with stored memories."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict

from omoide.errors import InvalidInput
from omoide.extract._common import (
    Drops,
    collapse,
    copies_example,
    folded_set,
    has_content,
    is_placeholder,
    unusable,
)
from omoide.llm.prompts import facts as facts_prompt
from omoide.llm.prompts import reconcile as reconcile_prompt
from omoide.llm.protocol import LLM, Completion
from omoide.types import Message

OpKind: TypeAlias = Literal["ADD", "UPDATE", "DELETE", "NOOP"]

# A fact is one short sentence; a longer one is a runaway or a pasted paragraph, and would fail
# later as a search query. Dropped alone, so the other facts of the answer are kept.
MAX_FACT_CHARS = 500
_EXAMPLES = folded_set(
    [*facts_prompt.FactsResponse.EXAMPLE["facts"]]
    + [op["text"] for op in reconcile_prompt.ReconcileResponse.EXAMPLE["operations"]]
)


class FactOp(BaseModel):
    """What to do with one candidate fact.

    ``ADD`` stores ``text`` as a new memory; ``UPDATE`` replaces memory ``target_id`` with
    ``text`` (superseding it, not erasing it); ``DELETE`` invalidates ``target_id``; ``NOOP``
    changes nothing (``target_id`` is the memory that already says it, when known).

        >>> FactOp(op="UPDATE", text="The user lives in Berlin", target_id="mem_42")
    """

    model_config = ConfigDict(frozen=True)

    op: OpKind
    text: str
    target_id: str | None = None


def extract_facts(
    llm: LLM,
    messages: Sequence[Message],
    today: str | None = None,
    *,
    drops: Drops | None = None,
    max_chars: int = MAX_FACT_CHARS,
) -> list[str]:
    """Candidate facts in ``messages``: stripped, non-empty, without exact repeats.

    A conversation with no text returns ``[]`` without calling the LLM; an unparseable answer
    raises ``LLMError`` (never ``[]``). Placeholders (``"..."``, ``"<fact>"``), copies of the
    prompt's example and facts over ``max_chars`` are dropped one by one and counted in ``drops``.

        >>> extract_facts(llm, [Message(content="I like jasmine tea")])
        ['The user likes jasmine tea']
    """
    if not has_content(messages):
        return []
    done = facts_prompt.build(messages, today).run(llm)
    kept = _keep(done.value.facts, messages, drops or Drops(), max_chars)
    return _unique(kept)


def reconcile(
    llm: LLM,
    facts: Sequence[str],
    existing: Sequence[tuple[str, str]],
    *,
    drops: Drops | None = None,
) -> list[FactOp]:
    """One operation per fact, deciding against ``existing`` ``(memory_id, text)`` pairs.

    The model sees short aliases ("0", "1", ...) instead of real ids, which it copies more
    reliably; they are mapped back here. An id the model invents, a missing id on UPDATE or
    DELETE, or two changes to one memory raise ``LLMError(retryable=False)`` for the whole batch:
    applying the rest would be guessing. With nothing stored every fact is an ADD, no call made.
    An ADD or UPDATE whose text is a placeholder, the prompt's example or over
    ``MAX_FACT_CHARS`` is dropped alone (counted in ``drops``).

        >>> reconcile(llm, ["The user lives in Berlin"], [("mem_42", "The user lives in Osaka")])
        [FactOp(op='UPDATE', text='The user lives in Berlin', target_id='mem_42')]
    """
    facts = _unique(collapse(fact) for fact in facts)
    if not facts:
        return []
    if not existing:
        return [FactOp(op="ADD", text=fact) for fact in facts]
    aliases = _aliases(existing)
    prompt = reconcile_prompt.build(facts, [(alias, text) for alias, (_, text) in aliases.items()])
    done = prompt.run(llm)
    ops = [_to_op(item, aliases, done) for item in done.value.operations]
    ops = [op for op in ops if op.op not in ("ADD", "UPDATE") or _usable(op, facts, drops)]
    _check_single_change(ops, done)
    return ops


def _keep(
    texts: Iterable[str], messages: Sequence[Message], drops: Drops, max_chars: int
) -> list[str]:
    kept = []
    for raw in texts:
        text = collapse(raw)
        if not text:
            drops.add("empty", raw, "fact")
            continue
        reason = _rejection(text, max_chars)
        if reason is None and copies_example(text, _EXAMPLES, messages):
            reason = "example"
        if reason is None:
            kept.append(text)
        else:
            drops.add(reason, text, "fact")
    return kept


def _rejection(text: str, max_chars: int) -> str | None:
    if is_placeholder(text):
        return "placeholder"
    if len(text) > max_chars:
        return "too_long"
    return None


def _usable(op: FactOp, facts: Sequence[str], drops: Drops | None) -> bool:
    reason = _rejection(op.text, MAX_FACT_CHARS)
    folded = collapse(op.text).casefold()
    # The facts given to reconcile are the only conversation it sees.
    if reason is None and folded in _EXAMPLES and folded not in folded_set(facts):
        reason = "example"
    if reason is not None:
        (drops or Drops()).add(reason, op.text, f"{op.op} operation")
    return reason is None


def _aliases(existing: Sequence[tuple[str, str]]) -> dict[str, tuple[str, str]]:
    ids = [memory_id for memory_id, _ in existing]
    if len(set(ids)) != len(ids):
        raise InvalidInput("reconcile: existing memories have duplicate ids")
    return {str(i): (memory_id, collapse(text)) for i, (memory_id, text) in enumerate(existing)}


def _to_op(
    item: reconcile_prompt.MemoryOperation,
    aliases: dict[str, tuple[str, str]],
    done: Completion[reconcile_prompt.ReconcileResponse],
) -> FactOp:
    text = collapse(item.text)
    if item.op == "ADD":
        if not text:
            raise unusable("ADD without text", done)
        return FactOp(op="ADD", text=text)
    if item.id is None:
        if item.op == "NOOP":
            return FactOp(op="NOOP", text=text)
        raise unusable(f"{item.op} without an id", done)
    if item.id not in aliases:
        raise unusable(f"{item.op} names memory id {item.id!r}, which was not offered", done)
    if item.op == "UPDATE" and not text:
        raise unusable(f"UPDATE of id {item.id!r} without text", done)
    return FactOp(op=item.op, text=text, target_id=aliases[item.id][0])


def _check_single_change(ops: list[FactOp], done: Completion[Any]) -> None:
    changed = [op.target_id for op in ops if op.op in ("UPDATE", "DELETE")]
    repeated = {target for target in changed if changed.count(target) > 1}
    if repeated:
        raise unusable(f"several changes to one memory: {sorted(map(str, repeated))}", done)


def _unique(texts: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(text for text in texts if text))
