"""Facts: extract candidates from a conversation, then reconcile them with stored memories."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict

from omoide.errors import InvalidInput
from omoide.extract._common import collapse, has_content, unusable
from omoide.llm.prompts import facts as facts_prompt
from omoide.llm.prompts import reconcile as reconcile_prompt
from omoide.llm.protocol import LLM, Completion
from omoide.types import Message

OpKind: TypeAlias = Literal["ADD", "UPDATE", "DELETE", "NOOP"]


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


def extract_facts(llm: LLM, messages: Sequence[Message], today: str | None = None) -> list[str]:
    """Candidate facts in ``messages``: stripped, non-empty, without exact repeats.

    A conversation with no text returns ``[]`` without calling the LLM; an unparseable answer
    raises ``LLMError`` (never ``[]``).

        >>> extract_facts(llm, [Message(content="I like jasmine tea")])
        ['The user likes jasmine tea']
    """
    if not has_content(messages):
        return []
    done = facts_prompt.build(messages, today).run(llm)
    return _unique(collapse(fact) for fact in done.value.facts)


def reconcile(llm: LLM, facts: Sequence[str], existing: Sequence[tuple[str, str]]) -> list[FactOp]:
    """One operation per fact, deciding against ``existing`` ``(memory_id, text)`` pairs.

    The model sees short aliases ("0", "1", ...) instead of real ids, which it copies more
    reliably; they are mapped back here. An id the model invents, a missing id on UPDATE or
    DELETE, or two changes to one memory raise ``LLMError(retryable=False)`` for the whole batch:
    applying the rest would be guessing. With nothing stored every fact is an ADD, no call made.

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
    _check_single_change(ops, done)
    return ops


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
