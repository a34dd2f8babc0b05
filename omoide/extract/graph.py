"""Entities and relationships: normalised, de-duplicated, and never pointing at nothing."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict

from omoide.extract._common import (
    Drops,
    collapse,
    copies_example,
    folded_set,
    has_content,
    is_placeholder,
)
from omoide.llm.prompts import graph as graph_prompt
from omoide.llm.protocol import LLM
from omoide.types import Message

log = logging.getLogger(__name__)

MAX_NAME_CHARS = 100
MAX_LABEL_CHARS = 64
MAX_NOTES_CHARS = 300
# "User" is the prompt's name for the user, not an example to drop.
_EXAMPLES = folded_set(
    e["name"] for e in graph_prompt.GraphResponse.EXAMPLE["entities"] if e["name"] != "User"
)


class GraphEntity(BaseModel):
    """A named thing; ``(name, type)`` is its identity (one entity per pair).

    ``type`` is a word of ``omoide.llm.prompts.graph.ENTITY_TYPES``.
    """

    model_config = ConfigDict(frozen=True)

    name: str
    type: str


class GraphRelation(BaseModel):
    """A directed, labelled edge, e.g. ``Mei -[sister of]-> User``, with optional notes."""

    model_config = ConfigDict(frozen=True)

    source: GraphEntity
    target: GraphEntity
    label: str
    notes: str | None = None


class Graph(NamedTuple):
    entities: list[GraphEntity]
    relationships: list[GraphRelation]


def extract_graph(llm: LLM, messages: Sequence[Message], *, drops: Drops | None = None) -> Graph:
    """Entities and relationships stated in ``messages``.

    Names are stripped and their whitespace collapsed; types are mapped to the vocabulary
    (``"Person"``, ``"person"`` -> person; ``"city"`` -> location; anything unknown -> other) and
    labels lowercased, so one thing does not become several entities. Placeholder names, the
    prompt's example entities (unless the conversation names them) and over-long names or labels
    are dropped and counted in ``drops``. Entities repeat once per
    ``(name, type)``, first spelling wins. A relationship is dropped when an endpoint is not
    among the entities (matched ignoring case), when it links an entity to itself, or when it
    has no label; the first of several identical edges is kept.

        >>> entities, relationships = extract_graph(llm, [Message(content="Mei is my sister")])
        >>> relationships[0].label
        'sister of'
    """
    if not has_content(messages):
        return Graph([], [])
    answer = graph_prompt.build(messages).run(llm).value
    drops = drops if drops is not None else Drops()
    entities = _entities(answer.entities, messages, drops)
    return Graph(list(entities.values()), _relations(answer.relationships, entities, drops))


def normalize_name(name: str) -> str:
    """``"  Mei   Lin "`` -> ``"Mei Lin"``."""
    return collapse(name)


def _entities(
    items: Sequence[graph_prompt.EntityItem], messages: Sequence[Message], drops: Drops
) -> dict[tuple[str, str], GraphEntity]:
    entities: dict[tuple[str, str], GraphEntity] = {}
    for item in items:
        name = normalize_name(item.name)
        if not name:
            drops.add("empty", item.name, "entity")
            continue
        reason = _name_rejection(name, messages)
        if reason is not None:
            drops.add(reason, name, "entity")
            continue
        kind = graph_prompt.entity_type(item.type)
        entities.setdefault((name.casefold(), kind), GraphEntity(name=name, type=kind))
    return entities


def _name_rejection(name: str, messages: Sequence[Message]) -> str | None:
    if is_placeholder(name):
        return "placeholder"
    if len(name) > MAX_NAME_CHARS:
        return "too_long"
    if copies_example(name, _EXAMPLES, messages):
        return "example"
    return None


def _relations(
    items: Sequence[graph_prompt.RelationshipItem],
    entities: dict[tuple[str, str], GraphEntity],
    drops: Drops,
) -> list[GraphRelation]:
    by_name: dict[str, GraphEntity] = {}
    for (folded, _), entity in entities.items():
        by_name.setdefault(folded, entity)
    relations: dict[tuple[str, str, str, str, str], GraphRelation] = {}
    for item in items:
        source = by_name.get(normalize_name(item.from_).casefold())
        target = by_name.get(normalize_name(item.to).casefold())
        label = collapse(item.label).lower()
        if source is None or target is None or source == target or not label:
            log.debug("dropping relationship %r -> %r (%r)", item.from_, item.to, item.label)
            continue
        if is_placeholder(label) or len(label) > MAX_LABEL_CHARS:
            drops.add("placeholder" if is_placeholder(label) else "too_long", label, "label")
            continue
        key = (source.name, source.type, target.name, target.type, label)
        note = collapse(item.notes or "")
        notes = None if is_placeholder(note) or len(note) > MAX_NOTES_CHARS else note
        relations.setdefault(
            key, GraphRelation(source=source, target=target, label=label, notes=notes)
        )
    return list(relations.values())
